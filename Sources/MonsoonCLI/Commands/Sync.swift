import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonPodcasts

struct Sync: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Refresh every podcast, queue the new episodes of those set to auto-download, download the queue, then exit.",
        discussion: """
            For cron and systemd timers ('monsoon systemd' prints the units). A podcast's new episodes are \
            queued when 'monsoon config set auto-download on --podcast PODCAST' (or globally without \
            --podcast). When another monsoon is downloading, sync hands the queue to it and waits, as get does. \
            A podcast with an archive folder (the setting folder, which 'archive -o DIR' sets) gets its \
            episodes there, with its feed.xml and manifest, as archive gives them.

              monsoon config set auto-download on --podcast "Morning Show"
              monsoon sync --quiet

            Exit status: 0 when every feed was read and every download done, 1 when something failed, \
            3 when the disk is full, 130 on Ctrl-C.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: QueueRunOptions
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let home = try Home(option: global.home, context: context)
        let episodes = try EpisodeSession.open(global, context: context)
        // 1. Every feed; what is new is what gets an id past the highest one now.
        let newestBefore = try CLIError.prefixing("cannot read the library") { try episodes.queue.highestEpisodeID() }
        // The feeds' documents, kept only for the copies in the podcasts' own archive folders: a folder lacking its
        // copy, its feed answering 304, is read once more here, so the episodes that read brings are queued below.
        let roots = try episodes.archiveFolders()
        var failedFeeds = 0
        let (results, documents) = try await LibrarySession.open(global, context: context, transfer: options.transfer).run { library in
            library.keepsFeedDocuments = !roots.isEmpty
            let results = try await library.refreshAll()
            let read = results.reduce(into: [Int: Data]()) { if roots[$1.0.id] != nil, case .success(let summary) = $1.1 { $0[$1.0.id] = summary.document } }
            guard !roots.isEmpty else { return (results, read) }
            return (results, try await ArchiveRun.readLackingCopies(of: roots, into: read, naming: try episodes.folderNaming(), queue: episodes.queue, library: library) {
                guard case .feedFailed(let url, let error) = $0 else { return }
                context.error(LibrarySession.feedFailure(url, error))
                failedFeeds += 1
            })
        }
        var autoPodcasts: [Int] = []
        for (podcast, result) in results {
            // On standard output, as `refresh` prints it (and `archive` its event lines).
            if !RefreshSummary.say(result, for: podcast, quiet: global.quiet || options.output.json, context: context) { failedFeeds += 1 }
            let auto = try CLIError.prefixing("cannot read the settings") { try episodes.settings.autoDownload(podcast: podcast.id) }
            if auto { autoPodcasts.append(podcast.id) }
        }
        // 2. The new episodes of the podcasts that download by themselves, oldest first.
        let fresh = try episodes.read { queue in try autoPodcasts.flatMap { try queue.newEpisodes(podcast: $0, after: newestBefore) } }
        let queued = try episodes.write { try $0.add(fresh) }
        if !queued.isEmpty && !global.quiet && !options.output.json { context.errors.line("monsoon: queued \(queued.count) new episode\(queued.count == 1 ? "" : "s")") }
        // 3. The queue.
        let runReport = options.output.makeReport()
        var status: Int32
        if let lock = try await HomeLock.acquire(path: home.lockPath, role: .download) {
            status = try await RunQueue.runQueue(lock: lock, home: home, options: options, global: global,
                                                 style: options.output.json ? .json : .events, report: runReport, context: context)
        } else {
            status = try await handOver(episodes, report: runReport, context: context)
        }
        // Episodes downloaded into an archive's folder join its manifest, as `archive` would list them.
        let kept = try episodes.keepArchiveFolders(documents: documents, context: context)
        if try !(EpisodeFileSession.addDownloadsToManifests(global, context: context) && kept) && status == ExitStatus.success { status = ExitStatus.failure }
        try options.output.write(runReport, command: "sync", context: context)
        if failedFeeds > 0 && status == ExitStatus.success { status = ExitStatus.failure }
        return status
    }

    /// Another monsoon runs the queue: it gets the episodes' downloads, and this follows them.
    private func handOver(_ episodes: EpisodeSession, report: RunReport?, context: CommandContext) async throws -> Int32 {
        let owes = options.after.exec != nil
        try await episodes.handOver { requests in if owes { try AfterDownload.owe(requests.map { ($0.id, $0.owner) }, databasePath: episodes.home.databasePath) } }
        var last = 0
        let pending = try CLIError.prefixing("cannot hand the queue to the running monsoon") {
            let pending = try episodes.store.pending().filter { $0.owner == .episode }.map(\.id)
            // Those queued earlier: the running monsoon may have them under way already (docs/REFERENCE.md says so).
            if owes { try AfterDownload.owe(pending.map { ($0, .episode) }, databasePath: episodes.home.databasePath) }
            last = try episodes.store.post(pending.map { .claim($0, by: getpid()) })
            return pending
        }

        let reporter = GetReporter(context: context, quiet: global.quiet, verbose: global.verbose, expected: pending.count, style: options.output.json ? .json : .events)
        reporter.answerFor(try pending.compactMap { id in try episodes.store.download(withID: id)?.request })
        // Those handed over, and as `download` does, what earlier runs left owed and the queue's missing sidecars.
        try AfterDownload.start(options.after, home: episodes.home, context: context, reporter: reporter)?.catchUp(pending, wholeQueue: true)
        let writer = try EpisodeStateWriter.open(home: episodes.home)
        var follower = HandOffFollower(global: global, transfer: options.transfer, home: episodes.home, store: episodes.store, reporter: reporter, context: context)
        follower.observe = { event in
            report?.observe(event)
            writer.record(event)
        }
        let status = try await follower.follow(handedThrough: last, retried: [])
        return writer.finish(status: status, context: context)
    }
}
