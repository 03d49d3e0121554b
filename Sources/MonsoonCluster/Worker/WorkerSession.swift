import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// A running worker's state, in the one task that talks to PostgreSQL (see `ClusterWorker`).
final class WorkerSession {
    typealias Event = ClusterWorker.Event

    /// A job the worker holds, with its download in the engine (none for a refresh).
    struct Held {
        var job: ClaimedJob
        var download: DownloadID?
        /// The engine's answer, kept while the database cannot take it (retried at each tick
        /// until the lease would be lost).
        var finished: Download?
        /// Its file's SHA-256, once worked out (before it is put in place).
        var sha256: String?
        /// A refresh's task, cancelled if the job is lost.
        var refresh: Task<Void, Never>?
        /// The URL a probe last asked where the download goes, and how many hops it followed.
        var probe: URL?
        var hops = 0
        /// Hosts that space their requests whose next request this job holds, until answered.
        var reserved: Set<String>
        /// Hosts its claim found spacing no requests (its own, and where its redirects ended
        /// last): asked without a round trip to the database (`request`). An interval set on
        /// one meanwhile holds from the next claim.
        var unspaced: Set<String>
        /// The request waiting for its host's turn (`requestDue`).
        var waiting: NextRequest?

        init(job: ClaimedJob) {
            self.job = job
            reserved = job.reserved
            // A claim reserves the next request of each of its hosts that spaces them.
            unspaced = Set([job.host] + (job.answeredHost.map { [$0] } ?? [])).subtracting(job.reserved)
        }

        /// Whether a request to `host` may go at once: the job holds its turn there, or the host
        /// spaces no requests.
        func asksNoTurn(on host: String) -> Bool { reserved.contains(host) || unspaced.contains(host) }
    }

    let configuration: WorkerConfiguration
    let events: AsyncStream<Event>.Continuation
    let manager: DownloadManager
    let connection: PostgresConnection
    let queue: JobQueue
    var connected = true
    var reconnectAt = ContinuousClock.now
    var reconnectDelay = 0.5
    var held: [Lease: Held] = [:]
    var leaseOfDownload: [DownloadID: Lease] = [:]
    /// When every held lease was last renewed (or, with none held, when the database last answered).
    var lastRenewal = ContinuousClock.now
    var lastMaintenance = ContinuousClock.now - .seconds(3600)
    var summary = WorkerSummary()
    /// What its transfers received, finished or not: the speed it renews with and tells.
    let received = ReceivedBytes()
    var renewalSpeed = SpeedMeter(), tickSpeed = SpeedMeter()
    /// Feeds with downloads recorded since their manifests were last written.
    var dirtyFeeds = Set<Int64>()
    var lastManifests = ContinuousClock.now - .seconds(3600)
    var stopping = false
    var maintainer: QueueMaintainer
    /// A flush of finished downloads is on its way (`finished`), and the flushes done so far.
    var flushScheduled = false, flushes = 0
    /// No claims before then: the engine could not queue a download (its database away).
    var claimsPausedUntil = ContinuousClock.now
    /// Downloads in a row the engine could not queue for want of its database: each one puts
    /// the next claim off twice as long (2 s, 4 s … 60 s).
    var storageFailures = 0
    var feedHostScopes = FeedHostScopes()

    var workFolder: String { Self.workFolder(of: configuration) }
    static func workFolder(of configuration: WorkerConfiguration) -> String { configuration.folder + "/.monsoon-work" }
    var renewalInterval: Duration { .milliseconds(Int(configuration.leaseSeconds * 250)) }
    var fenceAfter: Duration { .milliseconds(Int(configuration.leaseSeconds * 750)) }

    init(configuration: WorkerConfiguration, events: AsyncStream<Event>.Continuation) throws {
        self.configuration = configuration
        self.events = events
        maintainer = QueueMaintainer(configuration)
        connection = try PostgresConnection(configuration.database, connectTimeout: Self.quarter(configuration), settings: Self.liveness(configuration))
        try ClusterSchema.requireCurrent(connection)
        queue = JobQueue(connection: connection, worker: configuration.name, leaseSeconds: configuration.leaseSeconds)
        var engine = configuration.engine
        engine.maxConcurrentDownloads = max(1, configuration.slots)
        engine.maxDownloadsPerHost = nil   // the cluster's limits hold across workers; the engine adds none
        // One attempt per claim: a retry or a restart is a new claim, which the shared queue spaces
        // and counts with every other request to the host (`JobFailure` says when).
        engine.retry.maxRetries = 0
        engine.maxRestarts = 0
        try FileManager.default.createDirectory(atPath: Self.workFolder(of: configuration), withIntermediateDirectories: true)
        try queue.register(node: configuration.node)
        // The engine's queue is in memory: a job this worker held goes back to the shared queue if
        // it dies, and whoever claims it next takes its part over from the work folder.
        manager = DownloadManager(configuration: engine)
    }

    /// A quarter of the lease, in whole seconds (at least 2): how long a connection may take.
    static func quarter(_ configuration: WorkerConfiguration) -> Int {
        max(2, Int(configuration.leaseSeconds / 4))
    }

    /// A dead peer found within a quarter of the lease (keepalives, and a limit on unacknowledged
    /// sends), and no statement waiting longer: libpq would otherwise wait for the system's TCP
    /// timeout (a quarter of an hour) on a connection that went half-open, and the worker would
    /// neither renew nor stop its transfers meanwhile.
    static func liveness(_ configuration: WorkerConfiguration) -> [(String, String)] {
        let quarter = quarter(configuration)
        return [("keepalives", "1"), ("keepalives_idle", String(max(1, quarter / 2))), ("keepalives_interval", "1"), ("keepalives_count", "3"),
                ("tcp_user_timeout", String(quarter * 1000)), ("options", "-c statement_timeout=\(quarter * 1000) -c lock_timeout=\(quarter * 1000)")]
    }

    func run(_ stream: AsyncStream<Event>) async -> WorkerSummary {
        let events = self.events
        let engineEvents = manager.events([.statusChanged, .progress, .attempt, .removed])
        let forwarder = Task { [received] in
            var answered = Set<DownloadID>()   // until the worker removes the download
            for await event in engineEvents {
                received.count(event)
                switch event {
                case .progress, .attempt:
                    // The first sign that its request reached the server: a spaced host's turn ends.
                    if answered.insert(event.downloadID).inserted { events.yield(.answered(event.downloadID)) }
                case .statusChanged(let download):
                    // Done, given up on, or parked for want of disk space (which this worker lacks,
                    // not the job: another may have room). Its end answers it too (`finished`).
                    guard download.status == .completed || download.status == .failed || download.lastError?.code == .notEnoughDiskSpace else { continue }
                    answered.insert(download.id)
                    events.yield(.finished(download))
                case .removed(let id):
                    answered.remove(id)
                default:
                    continue
                }
            }
        }
        let poll = configuration.pollSeconds
        let tick = min(poll, configuration.leaseSeconds / 8)
        let timer = Task {
            var elapsed = 0.0
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int(tick * 1000)))   // cancelled: the loop ends
                events.yield(.tick)
                elapsed += tick
                if elapsed >= poll { elapsed = 0; events.yield(.wake) }
            }
        }
        let listener = NotificationListener(database: configuration.database, channel: JobQueue.channel) { events.yield(.wake) }

        await claimMore()
        for await event in stream {
            switch event {
            case .stop:
                stopping = true
            case .wake:
                await claimMore()
            case .tick:
                await maintain()
                tellProgress()
            case .finished(let download):
                finished(download)
            case .flush(let number):
                guard number == flushes else { break }   // one since did its work
                flushes += 1
                flushScheduled = false
                await settleFinished()
                await claimMore()
            case .probed(let lease, let result):
                await probed(lease, result)
            case .requestDue(let lease):
                if let next = held[lease]?.waiting { await request(lease, next) }
            case .answered(let id):
                if let lease = leaseOfDownload[id] { answered(lease) }
            case .refreshed(let lease, let result):
                settleRefresh(lease, result)
                await claimMore()
            }
            if stopping { break }
        }
        timer.cancel()
        // What finished is recorded first; then every transfer stops (parts kept, for whoever
        // claims the jobs next), and only then are the jobs handed back.
        await settleFinished()
        if let failure = await manager.shutdown() {
            // The engine's own rows, which the next start of this worker empties: worth a line, not a failure.
            report("could not save its transfers' last state in the database: \(failure)")
        }
        forwarder.cancel()
        await releaseAll()
        listener.stop()
        if !configuration.discard { writeManifests() }
        if !configuration.discard, !dirtyFeeds.isEmpty {
            let feeds = dirtyFeeds.count == 1 ? "1 feed" : "\(dirtyFeeds.count) feeds"
            report("stopped without the manifest of \(feeds); each is written when a worker next records a download of its feed")
        }
        database { try $0.unregister(node: configuration.node) }
        return summary
    }

    func claimMore() async {
        guard !stopping, connected, ContinuousClock.now >= claimsPausedUntil, !held.values.contains(where: \.job.isSuspect) else { return }
        let free = configuration.slots - held.count
        guard free > 0 else { return }
        // A suspect (its worker died while it ran) runs alone: if it kills this worker too, it
        // takes no other job's attempt with it.
        var claimed = held.isEmpty ? database({ try $0.claim(slots: 1, suspects: true) }) ?? [] : []
        if claimed.isEmpty {
            let started = ContinuousClock.now
            if let plain = database({ try $0.claim(slots: free) }) { claimed = plain }
            if !claimed.isEmpty { summary.claimSeconds.append((ContinuousClock.now - started) / .seconds(1)) }
        }
        var downloads: [ClaimedJob] = []
        for job in claimed {
            held[job.lease] = Held(job: job)
            switch job.kind {
            case .download:
                // A host that redirects (or not known yet), or that spaces its requests: look where
                // the download goes first, one request at a time.
                let spaced = job.reserved.contains(job.host)
                if spaced || (job.hostRedirects != false && !configuration.discard), let url = URL(string: job.url) {
                    await request(job.lease, .probe(url))
                } else if let host = URL(string: job.url).flatMap(ClusterHost.key(of:)), held[job.lease]?.asksNoTurn(on: host) == true {
                    downloads.append(job)   // as `request` would start it, with the others of the claim
                } else {
                    await request(job.lease, .download(nil))
                }
            case .refresh: startRefresh(job)
            }
        }
        await startDownloads(downloads)
    }

    /// Runs a refresh in a task of its own, with a connection of its own on a thread of its own:
    /// reading a large feed takes a while, and the worker's loop must go on renewing meanwhile.
    func startRefresh(_ job: ClaimedJob) {
        let events = self.events
        let manager = self.manager
        let (database, name, lease, allowsPrivate) = (configuration.database, configuration.name, configuration.leaseSeconds, configuration.allowPrivate)
        held[job.lease]?.refresh = Task {
            let result = await withTaskExecutorPreference(DatabaseExecutor(label: "monsoon.refresh")) { () async -> Result<ClusterRefresh.Outcome, Error> in
                do {
                    let queue = JobQueue(connection: try PostgresConnection(database), worker: name, leaseSeconds: lease)
                    return .success(try await ClusterRefresh.run(job, manager: manager, queue: queue, allowsPrivate: allowsPrivate))
                } catch {
                    return .failure(error)
                }
            }
            events.yield(.refreshed(job.lease, result))
        }
    }

    func settleRefresh(_ lease: Lease, _ result: Result<ClusterRefresh.Outcome, Error>) {
        answered(lease)   // the feed's host, when it spaces its requests, is free for its next one
        guard held.removeValue(forKey: lease) != nil else { return }   // lost meanwhile: its writes were fenced
        switch result {
        case .success(.refreshed), .success(.notModified):
            summary.refreshed += 1
        case .success(.failedPermanently(let reason)):
            if database({ try $0.fail(lease, reason: reason) }) == true { summary.failed += 1 }
        case .success(.failedTransiently(let reason)):
            database { try $0.retryLater(lease, after: 60, reason: reason) }
        case .failure(let error as SharedLibraryError) where error.code == .leaseLost:
            summary.lost += 1
            report(error.message)
        case .failure(let error):
            // Its own connection failed, or the feed could not be stored: another try later.
            let reason = (error as? PostgresError)?.message ?? "\(error)"
            report("the refresh of \(lease) failed: \(reason)")
            database { try $0.retryLater(lease, after: 30, reason: reason) }
        }
    }

    /// Runs `body` on the worker's connection. A broken connection is noted (the next ticks
    /// connect again, with backoff) and answers nil, as does any other failure, which is reported.
    @discardableResult
    func database<T>(_ body: (JobQueue) throws -> T) -> T? {
        guard connected else { return nil }
        do {
            return try body(queue)
        } catch let error as PostgresError {
            if error.code == .connectionLost || error.code == .connectionFailed || !connection.isConnected {
                connected = false
                reconnectAt = .now
                report("lost the database (\(error.message)); its transfers go on while their leases last")
            } else {
                report(error.message)
            }
            return nil
        } catch {
            report("\(error)")   // the queue's calls throw PostgresErrors only
            return nil
        }
    }

    func reconnectIfDue() {
        guard !connected, ContinuousClock.now >= reconnectAt else { return }
        do {
            try connection.reconnect()
            connected = true
            reconnectDelay = 0.5
            report("the database is back")
            // A claim in flight when it went away may have committed unseen.
            database { try $0.releaseUnknown(holding: Array(held.keys)) }
        } catch {
            reconnectAt = .now + .milliseconds(Int(reconnectDelay * 1000))
            reconnectDelay = min(30, reconnectDelay * 2)
        }
    }

    func report(_ message: String) {
        configuration.report("worker \(configuration.name): \(message)")
    }

    /// Tells where it stands, with the bytes a second received since the last tick.
    func tellProgress() {
        configuration.observe?(.progress(WorkerProgress(summary, running: held.count, bytesPerSecond: tickSpeed.read(received.value))))
    }
}
