import FoundationEssentials
import MonsoonEngine
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

    /// `sync` and `download`: the queued episodes' downloads, a podcast with its own folder (`roots`) named by its
    /// archive's template (`Remembered`) there, with the extras its archive was made with, as `archive` plans them;
    /// none into a folder whose archive root is not there (`keepFolders` says so).
    package static func requests(root: String, roots: [Int: String], naming: NamingTemplate, queue: EpisodeQueue,
                                 allowingPrivate: Bool) throws -> [DownloadRequest] {
        let archives = try Remembered.all(in: queue.database).filter { roots[$0.key] != nil }
        let namings = try archives.mapValues { try $0.naming(else: naming) }
        // A folder whose archive root is gone keeps its episodes queued: downloading would make it anew on the mount point.
        let gone = Set(roots.values.filter { !FileManager.default.fileExists(atPath: $0) })
        let episodes = try queue.requests(root: root, roots: roots, templates: namings, template: naming, allowingPrivate: allowingPrivate)
            .filter { !gone.contains($0.root ?? "") }
        let extras = archives.filter { !$0.value.extras.isEmpty }
        guard !extras.isEmpty else { return episodes }
        let run = ArchiveRun(root: root, naming: naming, folderNames: try queue.podcastFolderNames(), roots: roots, namings: namings)
        let scopes = try queue.addressScopes(allowingPrivate: allowingPrivate)
        let members = try PodcastLibrary.podcasts(readingOnly: queue.database).filter { extras[$0.id] != nil && run.link(to: $0) == nil && !gone.contains(roots[$0.id] ?? "") }
            .map { Member(podcast: $0, selection: try ArchiveSelection([]), folder: run.folder(of: $0)) }
        let groups = Dictionary(grouping: members) { extras[$0.podcast.id]?.extras.rawValue ?? 0 }
        return episodes + (try groups.sorted { $0.key < $1.key }.flatMap {
            try run.extraRequests(Extras(rawValue: $0.key), for: $0.value, episodes: episodes, queue: queue, scopes: scopes)
        })
    }

    /// The run that names each podcast's own folder (`roots`) as its archive does; every podcast here has its own
    /// root, so the run's is never used.
    static func folders(_ roots: [Int: String], naming: NamingTemplate, queue: EpisodeQueue) throws -> ArchiveRun {
        try PlanError.during(.readingQueue) {
            ArchiveRun(root: "/", naming: naming, folderNames: try queue.podcastFolderNames(), roots: roots,
                       namings: try Remembered.all(in: queue.database).mapValues { try $0.naming(else: naming) })
        }
    }

    /// `sync`, before it queues new episodes, so those this read brings are queued too: `documents` gets the feed of
    /// each podcast whose folder lacks its copy and whose feed answered 304, read once more without conditions.
    package static func readLackingCopies(of roots: [Int: String], into documents: [Int: Data], naming: NamingTemplate, queue: EpisodeQueue,
                                          library: PodcastLibrary, report: (Event) -> Void) async throws -> [Int: Data] {
        let run = try folders(roots, naming: naming, queue: queue)
        var loaded = try library.podcasts().filter { roots[$0.id] != nil && run.rootIsThere(of: $0, report: { _ in }) }.map { ($0, documents[$0.id]) }
        try await run.readLackingCopies(&loaded, library: { body in try await body(library) }, report: report)
        return loaded.reduce(into: documents) { $0[$1.0.id] = $1.1 }
    }

    /// A folder whose archive root is gone, a disk not mounted, is never made anew: that would fill the mount point.
    func rootIsThere(of podcast: Podcast, report: (Event) -> Void) -> Bool {
        if FileManager.default.fileExists(atPath: root(of: podcast)) { return true }
        report(.warning(podcast, "its archive folder \(root(of: podcast)) is not there, so nothing was written to it; mount its disk or make the folder"))
        return false
    }

    /// `sync` and `download`, once their downloads are done: each podcast with its own folder (the setting `folder`)
    /// gets what `archive` gives it, the copy of its feed when `documents` (the feeds `sync` read; `download` reads
    /// none) has a new one, and its manifest, from the files there, its extras among them. The events are the archive run's.
    package static func keepFolders(_ roots: [Int: String], documents: [Int: Data], naming: NamingTemplate, queue: EpisodeQueue, store: any QueueListing,
                                    databasePath: String, report: (Event) -> Void) throws {
        guard !roots.isEmpty else { return }
        let run = try folders(roots, naming: naming, queue: queue)
        let extras = try PlanError.during(.readingQueue) { try store.downloads() }.compactMap { download -> EpisodeFiles.Extra? in
            guard download.status == .completed, let kind = extraKind(of: download.request), let path = download.filePath else { return nil }
            return .init(path: path, kind: kind, sourceURL: download.request.url.absoluteString)
        }
        let podcasts = try PlanError.during(.readingQueue) { try PodcastLibrary.podcasts(readingOnly: queue.database) }.filter { roots[$0.id] != nil }
        let files = try EpisodeFiles(database: try Database(path: databasePath))
        for podcast in podcasts where run.rootIsThere(of: podcast, report: report) {
            guard let folder = run.folder(of: podcast) else { continue }
            if let link = run.link(to: podcast) {
                report(.refused(podcast, reason: run.linkMessage(link, of: podcast)))
                continue
            }
            var member = Member(podcast: podcast, selection: try ArchiveSelection([]), folder: folder)
            do {
                if let document = documents[podcast.id], FileManager.default.contents(atPath: folder + "/feed.xml") != document {
                    _ = try run.saveFeed(document, of: podcast, queue: queue)
                }
                member.extras = [.init(path: folder + "/feed.xml", kind: "feed", sourceURL: podcast.feedURL.absoluteString)]
                    + extras.filter { $0.path.hasPrefix(folder + "/") }
                try run.writeManifest(of: member, files: files)
            } catch {
                report(.manifestFailed(podcast, (error as? PlanError)?.error ?? error))
            }
        }
    }
}
