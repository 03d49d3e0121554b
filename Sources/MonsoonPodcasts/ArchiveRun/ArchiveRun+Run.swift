import FoundationEssentials
import MonsoonEngine

extension ArchiveRun {
    package struct Options {
        package var root: String
        package var naming: NamingTemplate
        package var extras: Extras
        /// Downloads done before whose file is gone are done again (`--refetch-missing`).
        package var refetchMissing: Bool
        /// At most this many downloads per podcast, new versions counted (`--limit`).
        package var limit: Int?
        /// Whether an earlier version's file stays once its newer one is in (`--versions all`).
        package var keepsEarlierVersions: Bool
        /// The podcasts' own archive folders (the setting `folder`), kept instead of `root`; empty when `root` was given.
        package var roots: [Int: String] = [:]
        /// Each podcast's archive (`Remembered`): its template, unless this run has `--template`, and its extras.
        package var archives: [Int: Remembered] = [:]
        /// `root` was given (`-o`): what this run was made with, for each podcast whose archive folder it is, or becomes.
        package var remembers: Remembered?

        package init(root: String, naming: NamingTemplate, extras: Extras = [], refetchMissing: Bool = false, limit: Int? = nil,
                     keepsEarlierVersions: Bool = true) {
            (self.root, self.naming, self.extras, self.refetchMissing, self.limit) = (root, naming, extras, refetchMissing, limit)
            self.keepsEarlierVersions = keepsEarlierVersions
        }
    }

    /// What a run came to beside its downloads: a step of its own that failed fails the run, whatever its downloads did.
    package struct Outcome {
        /// Feeds not read (or only in part), and podcasts refused for a link on the way to their folder.
        package var feedsFailed = 0
        /// Podcasts whose search for new versions failed: their feeds are archived all the same.
        package var scansFailed = 0
        /// Manifests that could not be written: their files are archived all the same.
        package var manifestsFailed = 0
        package var skipped = 0
        package var missing = 0

        package var failed: Bool { feedsFailed + scansFailed + manifestsFailed > 0 }

        mutating func count(_ event: Event) {
            switch event {
            case .feedFailed, .pageFailed, .refused: feedsFailed += 1
            case .scanFailed: scansFailed += 1
            case .manifestFailed: manifestsFailed += 1
            case .warning, .newVersion, .versionsLeft, .deletedEarlierVersion, .folderKept, .templateChanged: break
            }
        }
    }

    /// Every feed read, the run planned, its downloads run by `download`, then the manifests written and the earlier
    /// versions replaced. What only the command can do is handed in: `library` lends a podcast library for the feeds,
    /// then for the search for new versions (only when a podcast was refreshed). Each event is reported as it happens
    /// and counted in the outcome; a planning step that fails throws a `PlanError` before anything is downloaded.
    package static func run<Downloads>(_ urls: [URL], options: Options, queue: EpisodeQueue, store: any QueueListing, databasePath: String,
                                       library: (_ body: (PodcastLibrary) async throws -> Void) async throws -> Void,
                                       allowingPrivate: () throws -> Bool, select: @escaping ([ArchiveSelection.Candidate]) throws -> ArchiveSelection,
                                       download: (consuming Plan) async throws -> Downloads,
                                       report: @escaping (Event) -> Void) async throws -> (Outcome, Downloads) {
        var outcome = Outcome()
        let note: (Event) -> Void = { event in
            outcome.count(event)
            report(event)
        }
        var feeds: (loaded: [(Podcast, Data?)], refreshed: Set<Int>) = ([], [])
        try await library { feeds = await readFeeds(urls, in: $0, report: note) }
        let (run, plan) = try await self.plan(feeds.loaded, refreshed: feeds.refreshed, options: options, queue: queue, store: store,
                                              allowingPrivate: allowingPrivate, select: select, scanning: library, report: note)
        // The feeds' documents are in their folders by now, and the episodes' requests are the
        // downloads' to hold: neither stays here through them. The end reads only the extras'.
        feeds.loaded = []
        var ending = plan
        ending.requests = plan.requests.filter { Self.extraKind(of: $0) != nil }
        let downloads = try await download(consume plan)
        try run.finish(ending, store: store, databasePath: databasePath, keepsEarlierVersions: options.keepsEarlierVersions, report: note)
        (outcome.skipped, outcome.missing) = (ending.skipped, ending.missing)
        return (outcome, downloads)
    }

    /// Subscribes to (or refreshes) each feed, keeping its document for the folder's copy; one that cannot be read is
    /// reported and the others go on. Returns each podcast read with its document, and those refreshed, whose archived
    /// episodes may have new versions.
    static func readFeeds(_ urls: [URL], in library: PodcastLibrary, report: (Event) -> Void) async -> ([(Podcast, Data?)], Set<Int>) {
        library.keepsFeedDocuments = true
        var (loaded, refreshed): ([(Podcast, Data?)], Set<Int>) = ([], [])
        for url in urls {
            do {
                let summary: RefreshSummary
                let podcast: Podcast
                switch try await library.subscribe(to: url) {
                case .subscribed(let new, let first):
                    (podcast, summary) = (new, first)
                case .alreadySubscribed(let known):
                    (podcast, summary) = (known, try await library.refresh(known.id))
                    refreshed.insert(known.id)
                }
                if summary.pageError != nil { report(.pageFailed(podcast, summary)) }
                loaded.append((try library.podcast(withID: podcast.id) ?? podcast, summary.document))
            } catch {
                report(.feedFailed(url, error))
            }
        }
        return (loaded, refreshed)
    }
}
