import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

struct RunQueue: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download the queue (queued episodes, in queue order, and queued downloads) until nothing is left.",
        discussion: """
            Episodes go under the download root (--out, else the setting download-root, ~/Podcasts) \
            as the setting template names them; a podcast with an archive folder (the setting \
            folder) gets its episodes there, with its feed.xml and manifest. Downloads that were running when monsoon last stopped \
            resume from their part files; those waiting to retry keep their time. When the whole queue \
            does not fit on the disk, this says so first, downloads what fits in order, leaves the rest \
            queued and exits 3. Only one monsoon downloads per home: another terminal can follow and \
            steer it with 'monsoon downloads', 'monsoon queue', 'pause', 'resume', 'retry', 'remove' \
            and 'priority'.

            Examples:

              monsoon download
              monsoon download -o /mnt/podcasts -j 4
              monsoon download --json --report run.json
            """
    )

    static let handlesInterruption = true

    @OptionGroup var global: GlobalOptions

    @OptionGroup var options: QueueRunOptions

    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let home = try Home(option: global.home, context: context)
        guard let lock = try await HomeLock.acquire(path: home.lockPath, role: .download) else {
            let pid = HomeLock.holder(at: home.lockPath)?.mention ?? ""
            throw CLIError(message: "another monsoon\(pid) is already downloading in \(home.path); follow it with 'monsoon downloads'")
        }
        let runReport = options.output.makeReport()
        var status = try await Self.runQueue(lock: lock, home: home, options: options, global: global, style: options.output.json ? .json : .files,
                                             report: runReport, context: context)
        // Episodes downloaded into an archive's folder join its manifest, as `archive` would list them.
        let kept = try EpisodeSession.open(global, context: context).keepArchiveFolders(documents: [:], context: context)
        if try !(EpisodeFileSession.addDownloadsToManifests(global, context: context) && kept) && status == ExitStatus.success { status = ExitStatus.failure }
        try options.output.write(runReport, command: "download", context: context)
        return status
    }

    /// Runs the whole queue with the lock held: syncs the episode queue into it (episodes not
    /// started go under `--out`, else the setting), checks that it fits on the disk, downloads,
    /// and keeps the episodes in step. Shared by `download` and `sync`.
    static func runQueue(lock: HomeLock, home: Home, options: QueueRunOptions, global: GlobalOptions, style: GetReporter.Style,
                         report: RunReport?, context: CommandContext) async throws -> Int32 {
        defer { withExtendedLifetime(lock) {} }
        let episodes = try EpisodeSession.open(global, context: context)
        let requests = try episodes.requests(root: try episodes.downloadRoot(options.out, context: context), allowingPrivate: options.transfer.allowPrivate)
        try episodes.place(requests, what: "the episodes' downloads")

        var configuration = try options.transfer.configuration(scope: .wholeQueue, home: home, context: context)
        let space = try spacePlan(episodes.store, reserve: configuration.diskReserve)
        if let space, !space.fitsWhole {
            configuration.scope = .claimedOnly
            let plan = space.fits.isEmpty
                ? "none of the \(space.waits.count) queued downloads fits: nothing is downloaded; free some space, then run 'monsoon download' again"
                : "downloading the \(space.fits.count) of \(space.fits.count + space.waits.count) that fit, in order, and leaving the rest queued"
            context.error("not enough disk space for the whole queue: it needs \(ByteCount.format(space.needed)), "
                + "\(ByteCount.format(space.available)) is free beyond the \(ByteCount.format(configuration.diskReserve)) reserve; " + plan)
        }
        // What is queued now is what this run downloads: each file owes the hook a run before it starts.
        if options.after.exec != nil {
            let pending = try CLIError.prefixing("cannot read the download queue") { try episodes.store.pending() }
            try AfterDownload.owe(pending.map { ($0.id, $0.owner) }, databasePath: home.databasePath)

        }
        // Subscribed as the engine opens: the restore starts the whole queue's downloads at once.
        let session = try await QueueRun.open(home, configuration: configuration, claiming: [], context: context, global: global)
        let manager = session.manager
        if let space, !space.fitsWhole {
            do { try await manager.claim(space.fits) } catch {
                throw await QueueRun.shutDown(manager, failing: CLIError(error, "cannot start the downloads"), context: context)
            }
        }
        // Restoring may have completed some (killed between a file's rename and its row): count
        // what is still to do once it is done (a first answer from the engine comes after it).
        do { _ = try await manager.counts() } catch { throw CLIError(message: "cannot read the download queue: \(error)") }
        var pending = try CLIError.prefixing("cannot read the download queue") { try episodes.store.pending() }
        let stillPending = Set(pending.map(\.id))
        if let space, !space.fitsWhole {
            let fits = Set(space.fits)
            pending.removeAll { !fits.contains($0.id) }
        }
        let active = space.map { $0.fits.filter(stillPending.contains).count } ?? 0
        let writer = try EpisodeStateWriter.open(home: home)
        if space == nil {
            if let failure = await QueueRun.shutDown(manager) { throw failure }
            // Nothing to download, but hooks owed by an earlier run (killed, or failed) still run, and missing sidecars are written.
            let reporter = GetReporter(context: context, quiet: global.quiet, verbose: global.verbose, expected: 0, style: style, summarizes: false)
            if let after = try AfterDownload.start(options.after, home: home, context: context, reporter: reporter) {
                after.catchUp([], wholeQueue: true)
                if await context.interruption.handling({ await reporter.settle(interrupted: false) }) { return writer.finish(status: ExitStatus.interrupted, context: context) }
                if reporter.exitStatus() != ExitStatus.success { return writer.finish(status: ExitStatus.failure, context: context) }
            }
            if !global.quiet && style != .json { context.errors.line("monsoon: nothing to download") }
            return writer.finish(status: ExitStatus.success, context: context)
        }
        let reporter = GetReporter(context: context, quiet: global.quiet, verbose: global.verbose, expected: active, style: style)
        let afterDownload = try AfterDownload.start(options.after, home: home, context: context, reporter: reporter)
        afterDownload?.catchUp([], wholeQueue: true)
        // Queued ones count (and weigh in the bytes left) before they send an event; episodes go by their titles.
        reporter.expect(pending.map { ($0.id, $0.remaining) }, requests: requests)
        // A link refused because it expired (a private feed's) is renewed from the feed. Of the
        // downloads pending before the engine opened: one it has already failed (a refusal comes in
        // milliseconds) is not pending now, and its failure must still be waited for at idle.
        let renewal = LinkRenewal(manager: manager, databasePath: home.databasePath, downloads: space.map { $0.fits + $0.waits } ?? [])
        var status = await session.run(reporting: reporter, renewing: renewal) { event in
            report?.observe(event)
            writer.record(event)
            // One another command queued meanwhile, taken in: owed from now (those queued at the start are already).
            if case .added(let download) = event { afterDownload?.oweTakenIn(download) }
        }
        status = writer.finish(status: status, context: context)
        if let space, !space.fitsWhole, status != ExitStatus.interrupted { return ExitStatus.diskFull }
        return status
    }

    /// What fits of the queue on the disk, or nil when nothing is pending.
    private static func spacePlan(_ store: any QueueStore, reserve: Int) throws -> SpacePlan? {
        let pending = try CLIError.prefixing("cannot read the download queue") { try store.pending() }

        guard let first = pending.first else { return nil }
        // One file system for the whole queue: the one the first download goes to.
        guard let free = SpacePlan.freeBytes(for: first.folder) else { return SpacePlan(queue: pending.map { ($0.id, nil) }, free: 0, reserve: 0) }
        return SpacePlan(queue: pending.map { ($0.id, $0.remaining) }, free: free, reserve: reserve)
    }
}
