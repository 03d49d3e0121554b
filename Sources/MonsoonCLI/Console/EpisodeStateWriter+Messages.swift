import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

extension EpisodeStateWriter {
    /// The writer of `home`, its failure to open said as a command's error.
    static func open(home: Home, appliesRetention: Bool = true) throws -> EpisodeStateWriter {
        do { return try EpisodeStateWriter(databasePath: home.databasePath, appliesRetention: appliesRetention) } catch { throw CLIError(error) }
    }

    /// Ends the run's episode updates and says what they freed and what went wrong on the way.
    /// - Returns: the exit status to use: a failure here fails a run that had succeeded.
    func finish(status: Int32, context: CommandContext) -> Int32 {
        let outcome = finish()
        let freed = outcome.freed
        if !freed.episodes.isEmpty {
            context.error("deleted \(freed.episodes.count) older or played episode download\(freed.episodes.count == 1 ? "" : "s") (\(ByteCount.format(freed.bytes))) as keep-latest and auto-delete-played ask")
        }
        guard let failure = outcome.failure else { return status }
        context.error("could not update the episodes from their downloads: \(failure)")
        return status == ExitStatus.success ? ExitStatus.failure : status
    }
}
