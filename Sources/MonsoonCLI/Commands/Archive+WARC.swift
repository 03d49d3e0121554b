import FoundationEssentials
import MonsoonPodcasts

extension Archive {
    /// The run, recorded in a WARC with `--warc`. With it, the home's lock is taken first: a
    /// run that would hand its downloads to another monsoon (which records nothing) refuses
    /// before any feed is fetched. Then the WARC is opened (a folder that cannot be written to
    /// stops the run before any fetch) and closed last, after every engine's shutdown.
    func archive(_ urls: [URL], root: String, naming: NamingTemplate, episodes: EpisodeSession, context: CommandContext) async throws -> Int32 {
        guard warc.warc != nil else {
            return try await archive(urls, root: root, naming: naming, episodes: episodes, recording: nil, lock: nil, context: context)
        }
        guard let lock = try await HomeLock.acquire(path: episodes.home.lockPath, role: .get) else { throw WARCOptions.handOffRefusal }
        let settings = try transfer.configuration(scope: .claimedOnly, home: episodes.home, context: context, jobs: Archive.defaultJobs)
        let recording = try warc.open(command: "archive", settings: settings, context: context)
        let status: Int32
        do {
            status = try await archive(urls, root: root, naming: naming, episodes: episodes, recording: recording, lock: lock, context: context)
        } catch {
            WARCOptions.closeAfterFailure(recording, context: context)
            throw error
        }
        return WARCOptions.close(recording, status: status, quiet: global.quiet, context: context)
    }
}
