import Foundation
import MonsoonEngine
import MonsoonPodcasts
import MonsoonStore

/// Keeps episodes in step with their downloads while `monsoon download` runs: each status
/// change is written to the episode, and a finished one may make room (keep-latest).
final class EpisodeStateWriter: @unchecked Sendable {
    // Safe: called only from the one task that reads the engine's events, one event at a
    // time, then from the command after that task has ended; the connection is its own.
    private let queue: EpisodeQueue
    private let files: EpisodeFiles
    private let settings: Settings
    private var failure: Error?
    private var freed = EpisodeFiles.Deletion()
    /// Whether keep-latest and auto-delete-played apply (not for an archive, which keeps everything).
    private let appliesRetention: Bool

    init(home: Home, appliesRetention: Bool = true) throws {
        self.appliesRetention = appliesRetention
        do {
            let database = try Database(path: home.databasePath)
            queue = try EpisodeQueue(database: database)
            files = try EpisodeFiles(database: database)
            settings = try Settings(database: database)
        } catch {
            throw CLIError(error)
        }
    }

    /// A download changed status: if it is an episode's, its episode follows.
    func record(_ download: Download) {
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

    /// The run has ended: every episode follows its download, retention applies, and
    /// what went wrong on the way is said. Returns the exit status to use.
    func finish(status: Int32, context: CommandContext) -> Int32 {
        do {
            try queue.reconcile()
            if appliesRetention { merge(try files.applyRetention(settings)) }
        } catch {
            failure = failure ?? error
        }
        if !freed.episodes.isEmpty {
            context.error("deleted \(freed.episodes.count) older or played episode download\(freed.episodes.count == 1 ? "" : "s") (\(ByteCount.format(freed.bytes))) as keep-latest and auto-delete-played ask")
        }
        guard let failure else { return status }
        context.error("could not update the episodes from their downloads: \(failure)")
        return status == ExitStatus.success ? ExitStatus.failure : status
    }

    private func merge(_ deletion: EpisodeFiles.Deletion) {
        freed.episodes += deletion.episodes
        freed.bytes += deletion.bytes
    }
}
