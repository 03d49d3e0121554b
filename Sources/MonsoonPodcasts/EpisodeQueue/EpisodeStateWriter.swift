import FoundationEssentials
import MonsoonEngine
import MonsoonStore

/// Keeps episodes in step with their downloads while a run of the queue goes (`download`, `sync`, `archive`); a
/// finished one may make room (keep-latest, auto-delete-played). What it did is for the caller to say.
public final class EpisodeStateWriter: @unchecked Sendable {
    // Safe: called only from the one task that reads the engine's events, one event at a time, then from the command
    // after that task has ended; the connection is its own.
    private let queue: EpisodeQueue
    private let files: EpisodeFiles
    private let settings: Settings
    private var failure: (any Error)?
    private var freed = EpisodeFiles.Deletion()
    /// Not for an archive, which keeps everything.
    private let appliesRetention: Bool
    /// Episodes whose downloads changed since the last write, and those of them that completed:
    /// written together at most every `interval`, so a burst of thousands of events is a few
    /// transactions; one each would keep every event waiting for its own.
    private var changed: Set<Int> = []
    private var completed: Set<Int> = []
    private var lastWrite: ContinuousClock.Instant?
    private static let interval = Duration.milliseconds(250)
    private let now: () -> ContinuousClock.Instant

    public struct Outcome: Sendable {
        /// Downloads deleted to make room.
        public var freed: EpisodeFiles.Deletion
        public var failure: (any Error)?
    }

    /// On its own connection.
    public init(databasePath: String, appliesRetention: Bool = true, now: @escaping () -> ContinuousClock.Instant = { .now }) throws {
        self.appliesRetention = appliesRetention
        self.now = now
        let database = try Database(path: databasePath)
        queue = try EpisodeQueue(database: database)
        files = try EpisodeFiles(database: database)
        settings = try Settings(database: database)
    }

    /// Notes what `event` changed (a download's status); what was noted is written once the last
    /// write is a quarter of a second old, by any event that finds it so (progress comes several
    /// times a second while anything downloads), or at `finish`.
    public func record(_ event: DownloadEvent) {
        if case .statusChanged(let download) = event, let episode = EpisodeQueue.episodeID(of: download.request) {
            changed.insert(episode)
            if download.status == .completed { completed.insert(episode) }
        }
        guard !changed.isEmpty, lastWrite.map({ now() - $0 >= Self.interval }) ?? true else { return }
        // Timed from the write's end: a slow one (retention deleting files) is not followed by another at once.
        defer { (changed, completed, lastWrite) = ([], [], now()) }
        do {
            try queue.reconcile(episodes: Array(changed))
            guard appliesRetention else { return }
            for podcast in Set(try completed.compactMap { try files.podcast(ofEpisode: $0) }) {
                merge(try files.applyRetention(settings, podcast: podcast))
            }
        } catch {
            failure = failure ?? error
        }
    }

    /// Every episode follows its download and retention applies.
    public func finish() -> Outcome {
        (changed, completed) = ([], [])   // all of them, below
        do {
            try queue.reconcile()
            if appliesRetention { merge(try files.applyRetention(settings)) }
        } catch {
            failure = failure ?? error
        }
        return Outcome(freed: freed, failure: failure)
    }

    private func merge(_ deletion: EpisodeFiles.Deletion) {
        freed.episodes += deletion.episodes
        freed.bytes += deletion.bytes
    }
}
