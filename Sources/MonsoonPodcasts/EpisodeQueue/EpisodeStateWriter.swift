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

    public struct Outcome: Sendable {
        /// Downloads deleted to make room.
        public var freed: EpisodeFiles.Deletion
        public var failure: (any Error)?
    }

    /// On its own connection.
    public init(databasePath: String, appliesRetention: Bool = true) throws {
        self.appliesRetention = appliesRetention
        let database = try Database(path: databasePath)
        queue = try EpisodeQueue(database: database)
        files = try EpisodeFiles(database: database)
        settings = try Settings(database: database)
    }

    public func record(_ download: Download) {
        guard let episode = EpisodeQueue.episodeID(of: download.request) else { return }
        do {
            try queue.reconcile(episode: episode)
            if appliesRetention, download.status == .completed, let podcast = try files.podcast(ofEpisode: episode) {
                merge(try files.applyRetention(settings, podcast: podcast))
            }
        } catch {
            failure = failure ?? error
        }
    }

    /// Every episode follows its download and retention applies.
    public func finish() -> Outcome {
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
