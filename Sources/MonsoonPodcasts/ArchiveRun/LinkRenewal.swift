import FoundationEssentials
import MonsoonEngine
import MonsoonStore
import Synchronization

/// Renews the expired links of a run's episode downloads: when a server refuses one (401, 403, 410), the episode's feed
/// is read again, and the download goes on from its new link with its part kept (`ExpiredLinks` decides).
///
/// The run's event reader offers it every event before the reporter sees it (`takes`): a failure it takes is held
/// back, since the download may yet go on. Its own task (`work`) renews one link at a time; when no new link comes, it
/// gives the failure the reason (`DownloadManager.replaceFailure(of:with:)`). The engine never hears of podcasts: only
/// of a new URL, or a better reason. The run waits for it at idle (`settle`) and stops it with `end()`.
public final class LinkRenewal: Sendable {
    private struct State {
        var links = ExpiredLinks()
        var pending = 0
        /// A download went on from a new link since the last `settle`: the engine has more to do.
        var requeued = false
        var settling: [CheckedContinuation<Bool, Never>] = []
        var ended = false
        var problems: [String] = []
    }

    private enum Item: Sendable {
        case renew(ExpiredLinks.Job)
        case settle
    }

    private let state = Mutex(State())
    private let items: AsyncStream<Item>
    private let input: AsyncStream<Item>.Continuation
    private let manager: DownloadManager
    private let databasePath: String
    /// Those whose episodes' failures `settle` makes sure were offered.
    private let downloads: Set<DownloadID>

    /// - Parameters:
    ///   - manager: the run's engine; the feeds are fetched through it too.
    ///   - downloads: what the run runs (only episodes' downloads count).
    public init(manager: DownloadManager, databasePath: String, downloads: [DownloadID]) {
        (items, input) = AsyncStream.makeStream(of: Item.self)
        self.manager = manager
        self.databasePath = databasePath
        self.downloads = Set(downloads)
    }

    /// Whether it takes `event` over (the reporter and the run's observer do not see it): the failure of an episode's
    /// download on a refused link, whose renewal it queues.
    public func takes(_ event: DownloadEvent) -> Bool {
        guard case .statusChanged(let download) = event, download.status == .failed else { return false }
        let job: ExpiredLinks.Job? = state.withLock { state in
            guard let job = state.links.take(download) else { return nil }
            state.pending += 1
            return job
        }
        guard let job else { return false }
        input.yield(.renew(job))
        return true
    }

    /// Until `end()` or cancellation, with a connection and a library of its own, used by this task alone.
    public func work() async {
        let opened: Result<(PodcastLibrary, any QueueStore), Error> = Result {
            let database = try Database(path: databasePath)
            return (try PodcastLibrary(database: database, manager: manager), try DownloadStore(database: database))
        }
        for await item in items {
            switch item {
            case .renew(let job):
                await renew(job, opened.map(\.0))
                state.withLock { $0.pending -= 1 }
            case .settle:
                let answer = await settleNow(opened.map(\.1))
                let waiters = state.withLock { state in
                    defer { state.settling.removeAll() }
                    return state.settling
                }
                for waiter in waiters { waiter.resume(returning: answer) }
            }
        }
    }

    private var hasEnded: Bool { state.withLock { $0.ended } }

    private func renew(_ job: ExpiredLinks.Job, _ library: Result<PodcastLibrary, Error>) async {
        var refreshFailure: String?
        var renewedTo: URL?
        defer { state.withLock { $0.links.finished(job, renewedTo: renewedTo) } }
        while !hasEnded {
            var episode: Episode?
            do {
                episode = try library.get().episode(withID: job.episode)
            } catch {
                refreshFailure = refreshFailure ?? "the library cannot be read: \(PodcastLibrary.message(for: error))"
            }
            let action = state.withLock { $0.links.decide(job, podcast: episode?.podcastID, currentURL: episode?.enclosureURL, refreshFailure: refreshFailure) }
            switch action {
            case .refresh(let podcast):
                do {
                    let summary = try await library.get().refresh(podcast)
                    state.withLock { $0.links.refreshed(podcast: podcast, changedEpisodes: summary.added + summary.updated > 0) }
                } catch is CancellationError {
                    return   // the run is being stopped: its failure is the interruption's
                } catch {
                    refreshFailure = PodcastLibrary.message(for: error)
                }
            case .changeURL(let url):
                do {
                    try await manager.changeURL(job.download, to: url)
                    renewedTo = url
                    state.withLock { $0.requeued = true }
                } catch let refusal where refusal.code == .notFound || refusal.code == .shutDown {
                    // Removed meanwhile, or the run is over: nothing is left to go on.
                } catch {
                    note("\(job.download): could not go on from its new link: \(error)")
                }
                return
            case .fail(let error):
                do {
                    try await manager.replaceFailure(of: job.download, with: error)
                } catch let refusal where [.notFound, .invalidRequest, .shutDown].contains(refusal.code) {
                    // Removed, resumed or retried meanwhile, or the run is over: that stands instead.
                } catch {
                    note("\(job.download): could not record why its link failed: \(error)")
                }
                return
            }
        }
    }

    /// The engine went idle: whether renewals gave it more to do, else nothing more is taken from now on.
    private func settleNow(_ store: Result<any QueueStore, Error>) async -> Bool {
        // Failures the engine published as it went idle may not have reached the event reader yet: waited for, so they
        // are renewed too, a few seconds at most.
        if !downloads.isEmpty {
            let deadline = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < deadline {
                let unseen: Bool
                do {
                    // Only the failed ones are read: a run's whole queue, all in memory at once, would
                    // be the largest thing a long archive holds.
                    let store = try store.get()
                    let rows = try store.downloads(withIDs: try store.ids(withStatus: .failed).filter(downloads.contains))
                    unseen = state.withLock { state in
                        rows.contains { $0.request.owner == .episode && $0.status == .failed && ExpiredLinks.isRefusal($0.lastError?.httpStatus) && !state.links.hasSeen($0.id, at: $0.request.url) }
                    }
                } catch {
                    note("cannot read the download queue to finish renewing expired links: \(error)")
                    break
                }
                guard unseen else { break }
                do { try await Task.sleep(for: .milliseconds(20)) } catch { break }   // cancelled: the run is being stopped
            }
        }
        return state.withLock { state in
            if state.pending > 0 || state.requeued {
                state.requeued = false
                return true
            }
            // Closed in the same breath as the answer: a failure taken after it would have no run left to go on in.
            state.links.close()
            return false
        }
    }

    private func note(_ problem: String) {
        state.withLock { $0.problems.append(problem) }
    }

    /// At idle: true when renewed downloads give the engine more to do (wait for idle again).
    public func settle() async -> Bool {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state in
                if !state.ended { state.settling.append(continuation) }
                return state.ended
            }
            if ended {
                continuation.resume(returning: false)
            } else {
                input.yield(.settle)
            }
        }
    }

    /// Nothing more is taken, the worker ends, and a `settle` still waiting hears false.
    public func end() {
        let waiters = state.withLock { state in
            state.ended = true
            state.links.close()
            defer { state.settling.removeAll() }
            return state.settling
        }
        input.finish()
        for waiter in waiters { waiter.resume(returning: false) }
    }

    /// For the run to say when it ends.
    public var problems: [String] { state.withLock { $0.problems } }
}
