import FoundationEssentials
import MonsoonPodcasts

extension EpisodeSession {
    /// After `sync` or `download`: each podcast's own archive folder gets its feed copy and manifest, as `archive` gives
    /// them (`ArchiveRun.keepFolders`); `documents` are the feeds this run read. False when one could not be kept (said
    /// on standard error).
    func keepArchiveFolders(documents: [Int: Data], global: GlobalOptions, transfer: TransferOptions, context: CommandContext) async throws -> Bool {
        let roots = try archiveFolders()
        guard !roots.isEmpty else { return true }
        let naming = try CLIError.prefixing("cannot read the settings") { try settings.template() }
        var kept = true
        do {
            try await ArchiveRun.keepFolders(roots, documents: documents, naming: naming, queue: queue, store: store, databasePath: home.databasePath, library: { body in
                try await LibrarySession.open(global, context: context, transfer: transfer).run(body)
            }, report: { event in
                switch event {
                case .feedFailed(let url, let error): context.error(LibrarySession.feedFailure(url, error))
                case .refused(let podcast, let reason): context.error("\(podcast.name): \(reason)")
                case .manifestFailed(let podcast, let error): context.error("\(podcast.name): cannot update its archive folder: \(error)")
                default: return
                }
                kept = false
            })
        } catch let failure as ArchiveRun.PlanError {
            throw CLIError(message: "cannot keep the archive folders: \(failure.error)")
        }
        return kept
    }
}
