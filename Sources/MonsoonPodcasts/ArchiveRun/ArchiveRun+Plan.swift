import FoundationEssentials
import MonsoonEngine
import MonsoonStore

extension ArchiveRun {
    /// What a run downloads once its feeds are read: each podcast's choice and folder, the requests (the episodes', then
    /// the extras still missing), and what was there already.
    package struct Plan {
        package var members: [Member] = []
        package var requests: [DownloadRequest] = []
        /// Extras an earlier run completed, their files still there.
        package var extrasThere = 0

        /// Their files there, or missing.
        package var archivedBefore: [DownloadID] {
            members.flatMap(\.selection.alreadyArchived).map(EpisodeQueue.downloadID(ofEpisode:))
        }

        /// Archived before, but the file is gone.
        package var missing: Int { members.reduce(0) { $0 + $1.selection.missingFromDisk.count } }

        /// Archived before, the file still there.
        package var skipped: Int { members.reduce(0) { $0 + $1.selection.alreadyArchived.count } - missing }

        /// What the run does not download, by why: `alreadyArchived`, `missingFromDisk` (`--refetch-missing` fetches
        /// them), `extrasThere`, and each `ArchiveSelection.LeftOut`; reasons that count none are left out.
        package var skips: [String: Int] {
            var counts = ["alreadyArchived": skipped, "missingFromDisk": missing, "extrasThere": extrasThere]
            for (reason, count) in members.flatMap(\.selection.leftOut) { counts[reason.rawValue, default: 0] += count }
            return counts.filter { $0.value > 0 }
        }
    }

    /// What happens while a run is planned and finished, for the command to say its way.
    package enum Event {
        /// The feed could not be read; the others are archived all the same.
        case feedFailed(URL, any Error)
        /// A later page could not be read (`RefreshSummary/pageError`): the pages before it are archived.
        case pageFailed(Podcast, RefreshSummary)
        /// The podcast's folder is, or passes through, a symbolic link: nothing of it is written.
        case refused(Podcast, reason: String)
        /// The podcast's manifest could not be written; its files are archived all the same.
        case manifestFailed(Podcast, any Error)
        /// A version a server could not tell about, a problem replacing an earlier version.
        case warning(Podcast, String)
        /// Looking for new versions of the podcast's episodes failed; its feed is archived all the same.
        case scanFailed(Podcast, any Error)
        /// To download; with `problem`, its archived file cannot be read, and it was left as it is.
        case newVersion(Podcast, title: String, reason: String, problem: String?)
        /// New versions beyond `--limit`, left for a later run.
        case versionsLeft(Podcast, Int)
        /// An earlier version's file was deleted, its newer one in.
        case deletedEarlierVersion(String)
        /// Archived under the run's root this time, the podcast keeps its own folder (`folder`), where `sync` puts its episodes.
        case folderKept(Podcast, String)
        /// Its archive's template is this run's from now on, for `sync` and `download` too.
        case templateChanged(Podcast, String?)
    }

    /// A step of the planning that failed: the command words it by what the step was doing.
    package struct PlanError: Error {
        package enum Step { case readingQueue, changingQueue, checkingManifests, planningDownloads, savingFeed }
        package var step: Step
        package var error: any Error

        static func during<T>(_ step: Step, _ body: () throws -> T) throws -> T {
            do { return try body() } catch { throw PlanError(step: step, error: error) }
        }
    }

    /// The episodes first catch up with their downloads (a killed run's last ones), so a republished episode's earlier
    /// file becomes an earlier version; the manifests are checked; the refreshed podcasts' archived episodes are looked
    /// at for new versions (in the library `scanning` lends, opened only when there are some). Then each podcast's
    /// choice is made with `select` (once, however often it was named), its feed saved in its folder, the chosen
    /// episodes queued, and their downloads and the `extras` planned (one complete from an earlier run is done).
    static func plan(_ loaded: [(Podcast, Data?)], refreshed: Set<Int>, options: Options, queue: EpisodeQueue, store: any QueueListing,
                     allowingPrivate: () throws -> Bool, select: @escaping ([ArchiveSelection.Candidate]) throws -> ArchiveSelection,
                     scanning: (_ scan: (PodcastLibrary) async throws -> Void) async throws -> Void,
                     report: @escaping (Event) -> Void) async throws -> (ArchiveRun, Plan) {
        try PlanError.during(.changingQueue) { try queue.reconcile() }
        let namings = try PlanError.during(.readingQueue) { try options.archives.mapValues { try $0.naming(else: options.naming) } }
        let run = ArchiveRun(root: options.root, naming: options.naming, folderNames: try PlanError.during(.readingQueue) { try queue.podcastFolderNames() },
                             roots: options.roots, namings: namings)
        try PlanError.during(.checkingManifests) { try run.checkManifests(of: loaded.map(\.0)) }
        // Only once the manifests are sound: a run they stop leaves the podcasts' settings as they were.
        if let remembers = options.remembers { try run.remember(remembers, of: loaded.map(\.0), in: queue.database, report: report) }
        let podcasts = loaded.map(\.0).filter { refreshed.contains($0.id) }
        if !podcasts.isEmpty {
            try await scanning { library in
                try await run.startNewVersions(of: podcasts, library: library, queue: queue, limit: options.limit, select: select, report: report)
            }
        }
        var loaded = loaded
        try await run.readLackingCopies(&loaded, library: scanning, report: report)
        var plan = Plan()
        var chosen: [Int] = []
        var seen = Set<Int>()
        for (podcast, document) in loaded where seen.insert(podcast.id).inserted {
            let candidates = try PlanError.during(.readingQueue) { try queue.archiveCandidates(podcast: podcast.id) }
            var member = Member(podcast: podcast, selection: try select(candidates), folder: run.folder(of: podcast))
            if let link = run.link(to: podcast) {
                report(.refused(podcast, reason: run.linkMessage(link, of: podcast)))
                continue
            }
            if let document, let feed = try run.saveFeed(document, of: podcast, queue: queue) { member.extras.append(feed) }
            plan.members.append(member)
            chosen += member.selection.chosen
        }
        if options.refetchMissing { try PlanError.during(.changingQueue) { try queue.forgetMissingDownloads(chosen) } }
        _ = try PlanError.during(.changingQueue) { try queue.add(chosen) }
        let wanted = Set(chosen.map(EpisodeQueue.downloadID(ofEpisode:)))
        let scopes: [Int: AddressScope]
        (plan.requests, scopes) = try PlanError.during(.planningDownloads) {
            let allowingPrivate = try allowingPrivate()
            return (try queue.requests(root: options.root, roots: options.roots, templates: namings, template: options.naming, allowingPrivate: allowingPrivate)
                        .filter { wanted.contains($0.id) }, try queue.addressScopes(allowingPrivate: allowingPrivate))
        }
        // Each podcast's archive keeps the extras it was made with, besides this run's.
        let groups = Dictionary(grouping: plan.members) { options.extras.union(options.archives[$0.podcast.id]?.extras ?? []).rawValue }
        let episodes = plan.requests
        for extra in try groups.sorted(by: { $0.key < $1.key }).flatMap({ extras, members in
            try run.extraRequests(Extras(rawValue: extras), for: members, episodes: episodes, queue: queue, scopes: scopes)
        }) {
            if let existing = try store.download(withID: extra.id), existing.status == .completed,
               let path = existing.filePath, FileManager.default.fileExists(atPath: path) {
                plan.extrasThere += 1
            } else {
                plan.requests.append(extra)
            }
        }
        return (run, plan)
    }

    /// After the downloads: each podcast's manifest, from the files themselves; then, unless `keepsEarlierVersions`,
    /// the earlier versions whose newer one is in go: after the manifests, so a run killed in between leaves them
    /// listing files still there.
    func finish(_ plan: Plan, store: any QueueListing, databasePath: String, keepsEarlierVersions: Bool, report: (Event) -> Void) throws {
        var members = plan.members
        for request in plan.requests {
            guard let kind = Self.extraKind(of: request), let download = try store.download(withID: request.id), download.status == .completed,
                  let path = download.filePath, let index = members.firstIndex(where: { $0.folder.map { path.hasPrefix($0 + "/") } ?? false }) else { continue }
            members[index].extras.append(.init(path: path, kind: kind, sourceURL: request.url.absoluteString))
        }
        let written = members.filter { $0.folder.map(FileManager.default.fileExists(atPath:)) ?? false }
        for (index, error) in writeManifests(of: written, databasePath: databasePath) { report(.manifestFailed(written[index].podcast, error)) }
        guard !keepsEarlierVersions else { return }
        let files = try EpisodeFiles(database: try Database(path: databasePath))
        for member in members {
            let replacement = try files.replaceEarlierVersions(podcast: member.podcast.id, root: root(of: member.podcast))
            for warning in replacement.warnings { report(.warning(member.podcast, warning)) }
            for file in replacement.deleted { report(.deletedEarlierVersion(file)) }
        }
    }

    /// The copy of its feed in the podcast's folder, when the template gives one: the manifest's extra.
    func saveFeed(_ document: Data, of podcast: Podcast, queue: EpisodeQueue) throws -> EpisodeFiles.Extra? {
        guard let folder = folder(of: podcast) else { return nil }
        let path = folder + "/feed.xml"
        // A private feed's copy holds its tokens (in its URLs, its enclosures'): for the owner only.
        let isPrivate = try PlanError.during(.readingQueue) { try EpisodeQueue.carriesCredentials(podcast: podcast.id, in: queue.database) }
        try PlanError.during(.savingFeed) { try AtomicFile.write(document, to: path, mode: isPrivate ? 0o600 : 0o644) }
        return .init(path: path, kind: "feed", sourceURL: podcast.feedURL.absoluteString)
    }

    /// Makes each new version found (`PodcastLibrary.scanVersions`) one to download again, its earlier file an earlier
    /// version. Only episodes `select` keeps are looked at, and a new version counts toward `limit` (one over it is
    /// found again by a later run), so no episode is switched to one the run does not download. A podcast whose folder
    /// is a link is left alone (the plan refuses it).
    func startNewVersions(of podcasts: [Podcast], library: PodcastLibrary, queue: EpisodeQueue, limit: Int?,
                          select: ([ArchiveSelection.Candidate]) throws -> ArchiveSelection, report: (Event) -> Void) async throws {
        var seen = Set<Int>()
        for podcast in podcasts where seen.insert(podcast.id).inserted && link(to: podcast) == nil {
            let selection = try select(try PlanError.during(.readingQueue) { try queue.archiveCandidates(podcast: podcast.id) })
            let room = limit.map { $0 - selection.chosen.count } ?? selection.alreadyArchived.count
            guard room > 0, !selection.alreadyArchived.isEmpty else { continue }
            let scan: VersionScan
            do {
                scan = try await library.scanVersions(podcast: podcast.id, among: selection.alreadyArchived)
            } catch let error as CancellationError {
                throw error
            } catch {
                report(.scanFailed(podcast, error))
                continue
            }
            for message in scan.unknown { report(.warning(podcast, message)) }
            // In the selection's order, as many as the limit leaves room for.
            let order = Dictionary(selection.alreadyArchived.enumerated().map { ($1, $0) }, uniquingKeysWith: min)
            let found = scan.found.sorted { order[$0.episodeID, default: 0] < order[$1.episodeID, default: 0] }
            let started = Array(found.prefix(room))
            let skipped = try PlanError.during(.changingQueue) { try queue.startNewVersions(started.map(\.episodeID)) }
            for item in started { report(.newVersion(podcast, title: item.title, reason: item.reason, problem: skipped[item.episodeID])) }
            if found.count > started.count { report(.versionsLeft(podcast, found.count - started.count)) }
        }
    }
}
