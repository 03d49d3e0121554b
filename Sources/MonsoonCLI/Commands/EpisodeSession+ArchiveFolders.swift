import FoundationEssentials
import MonsoonPodcasts

extension EpisodeSession {
    /// After `sync` or `download`: each podcast's own archive folder gets its feed copy and manifest, as `archive` gives
    /// them (`ArchiveRun.keepFolders`); `documents` are the feeds `sync` read. False when one could not be kept (said
    /// on standard error); a folder whose disk is not there is only said.
    func keepArchiveFolders(documents: [Int: Data], context: CommandContext) throws -> Bool {
        let roots = try archiveFolders()
        guard !roots.isEmpty else { return true }
        var kept = true
        do {
            try ArchiveRun.keepFolders(roots, documents: documents, naming: try folderNaming(), queue: queue, store: store, databasePath: home.databasePath) { event in
                switch event {
                case .warning(let podcast, let warning): context.error("\(podcast.name): \(warning)")
                case .refused(let podcast, let reason): context.error("\(podcast.name): \(reason)")
                case .manifestFailed(let podcast, let error): context.error("\(podcast.name): cannot update its archive folder: \(error)")
                default: return
                }
                if case .warning = event { return }
                kept = false
            }
        } catch let failure as ArchiveRun.PlanError {
            throw CLIError(message: "cannot keep the archive folders: \(failure.error)")
        }
        return kept
    }

    func folderNaming() throws -> NamingTemplate {
        try CLIError.prefixing("cannot read the settings") { try settings.template() }
    }
}
