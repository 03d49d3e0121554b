import FoundationEssentials
import MonsoonStore

extension ArchiveRun {
    /// A feed read since by `add`, `sync` or `refresh` answers 304, with no document: read once more without
    /// conditions for a folder that lacks its copy. One that cannot be read is reported, and keeps no copy.
    func readLackingCopies(_ loaded: inout [(Podcast, Data?)], library: (_ body: (PodcastLibrary) async throws -> Void) async throws -> Void,
                           report: (Event) -> Void) async throws {
        let lacking = loaded.indices.filter { loaded[$0].1 == nil && lacksFeedCopy(loaded[$0].0) }
        guard !lacking.isEmpty else { return }
        var failures: [Event] = []
        try await library { library in
            library.keepsFeedDocuments = true
            for index in lacking {
                do { loaded[index].1 = try await library.refresh(loaded[index].0.id, conditional: false).document } catch let error as CancellationError {
                    throw error
                } catch {
                    failures.append(.feedFailed(loaded[index].0.feedURL, error))
                }
            }
        }
        failures.forEach(report)
    }

    /// `sync` and `download`, once their downloads are done: each podcast with its own folder (the setting `folder`)
    /// gets what `archive` gives it, the copy of its feed (`documents`, from this run's refresh, else read again when
    /// the folder lacks it) and its manifest, from the files there. The events are the archive run's.
    package static func keepFolders(_ roots: [Int: String], documents: [Int: Data], naming: NamingTemplate, queue: EpisodeQueue,
                                    databasePath: String, library: (_ body: (PodcastLibrary) async throws -> Void) async throws -> Void,
                                    report: (Event) -> Void) async throws {
        guard !roots.isEmpty else { return }
        // Every podcast here has its own root: the run's is never used.
        let run = ArchiveRun(root: "/", naming: naming, folderNames: try PlanError.during(.readingQueue) { try queue.podcastFolderNames() }, roots: roots)
        var loaded: [(Podcast, Data?)] = []
        try await library { library in loaded = try library.podcasts().filter { roots[$0.id] != nil }.map { ($0, documents[$0.id]) } }
        try await run.readLackingCopies(&loaded, library: library, report: report)
        let files = try EpisodeFiles(database: try Database(path: databasePath))
        for (podcast, document) in loaded {
            guard let folder = run.folder(of: podcast) else { continue }
            if let link = run.link(to: podcast) {
                report(.refused(podcast, reason: run.linkMessage(link, of: podcast)))
                continue
            }
            var member = Member(podcast: podcast, selection: try ArchiveSelection([]), folder: folder)
            do {
                if let document { _ = try run.saveFeed(document, of: podcast, queue: queue) }
                member.extras = [.init(path: folder + "/feed.xml", kind: "feed", sourceURL: podcast.feedURL.absoluteString)]
                try run.writeManifest(of: member, files: files)
            } catch {
                report(.manifestFailed(podcast, (error as? PlanError)?.error ?? error))
            }
        }
    }
}
