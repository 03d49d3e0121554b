import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonPodcasts

extension Archive {
    /// The run, which `ArchiveRun` sequences and this command says. `lock`: the home's, taken
    /// already (with --warc, before anything is fetched).
    func archive(_ urls: [URL], root: String, naming: NamingTemplate, episodes: EpisodeSession, recording: WARCArchive?,
                 lock: HomeLock?, context: CommandContext) async throws -> Int32 {
        let runReport = output.makeReport()
        let started = Date()
        var options = ArchiveRun.Options(
            root: root, naming: naming, extras: [withArtwork ? .artwork : [], withTranscripts ? .transcripts : [], withChapters ? .chapters : []],
            refetchMissing: refetchMissing, limit: limit, keepsEarlierVersions: (versions ?? .all) == .all)
        // -o is where this run archives, and a podcast's folder from now on if it has none; without it, each its own.
        options.roots = out == nil ? try episodes.archiveFolders() : [:]
        if out != nil { options.remembers = .init(template: template, portable: portableNames, extras: options.extras, infoJSON: after.writeInfoJSON) }
        // Each podcast's archive keeps its extras, and its template unless --template says otherwise.
        options.archives = try CLIError.prefixing("cannot read the settings") { try episodes.settings.archives() }
            .mapValues { template == nil ? $0 : .init(portable: $0.portable, extras: $0.extras, infoJSON: $0.infoJSON) }
        let outcome: ArchiveRun.Outcome
        var (status, tally): (Int32, GetReporter.Tally)
        do {
            (outcome, (status, tally)) = try await ArchiveRun.run(
                urls, options: options, queue: episodes.queue, store: episodes.store, databasePath: episodes.home.databasePath,
                library: { body in
                    // The feeds' requests, and the probes (HEAD, or the first byte) of enclosures for new versions, are
                    // requests the WARC records too.
                    try await LibrarySession.open(global, context: context, transfer: transfer, warc: recording).run(body)
                },
                allowingPrivate: { try transfer.allowPrivate || episodes.settings.allowPrivate() }, select: select,
                download: { plan in try await download(consume plan, lock: lock, episodes: episodes, recording: recording, runReport: runReport, context: context) },
                report: { say($0, root: root, context: context) })
        } catch let failure as ArchiveRun.PlanError {
            throw Self.failure(failure)
        }
        if outcome.failed && status == ExitStatus.success { status = ExitStatus.failure }
        summarize(tally, skipped: outcome.skipped, missing: outcome.missing, failedFeeds: outcome.feedsFailed, started: started, context: context)
        try output.write(runReport, command: "archive", context: context)
        return status
    }

    /// The plan's downloads (and the extras asked for), said as they go, with their sidecars and
    /// hooks; the episodes follow them. Returns the exit status they give, and their counts.
    private func download(_ plan: consuming ArchiveRun.Plan, lock: HomeLock?, episodes: EpisodeSession, recording: WARCArchive?, runReport: RunReport?,
                          context: CommandContext) async throws -> (Int32, GetReporter.Tally) {
        let requests = plan.requests
        plan.requests = []   // held by `requests` alone, which `run` lets go of once they are queued
        runReport?.skipped(plan.skips)
        let reporter = GetReporter(context: context, quiet: global.quiet || output.json, verbose: global.verbose, expected: requests.count,
                                   style: output.json ? .json : .events, summarizes: false)
        reporter.answerFor(requests)
        reporter.countAlreadyThere(plan.extrasThere)
        // Sidecars and hooks: for what this run downloads, and what earlier runs did (`--write-info-json`
        // added to an archive writes the missing ones; a hook owed from a killed or failed run runs).
        let afterDownload = try AfterDownload.start(after, home: episodes.home, context: context, reporter: reporter)
        try afterDownload?.owe(requests.map { ($0.id, $0.owner) })
        reporter.countsAsThere(plan.archivedBefore)   // counted as skipped
        afterDownload?.catchUp(plan.archivedBefore)
        // An archive keeps everything: keep-latest and auto-delete-played are for listening.
        let writer = try EpisodeStateWriter.open(home: episodes.home, appliesRetention: false)
        let observe: @Sendable (DownloadEvent) -> Void = { event in
            runReport?.observe(event)
            writer.record(event)
        }
        var status: Int32
        var held = lock
        if held == nil { held = try await HomeLock.acquire(path: episodes.home.lockPath, role: .get) }
        if let lock = held {
            status = try await run(consume requests, lock: lock, episodes: episodes, recording: recording, reporter: reporter, observe: observe, context: context)
        } else {
            status = try await handOver(requests, episodes: episodes, reporter: reporter, observe: observe, context: context)
        }
        return (writer.finish(status: status, context: context), reporter.tally)
    }

    private func say(_ event: ArchiveRun.Event, root: String, context: CommandContext) {
        switch event {
        case .folderKept(let podcast, let folder):
            if !global.quiet && !output.json {
                context.errors.line("monsoon: \(podcast.name): archived in \(root) this time; its folder stays \(folder), where sync and download put "
                                    + "its new episodes; to move on to \(root): monsoon config set folder \(root.shellQuoted) --podcast \(podcast.id)")
            }
        case .templateChanged(let podcast, let template):
            if !global.quiet && !output.json {
                let named = template.map { "'\($0)'" } ?? "the setting template"
                context.errors.line("monsoon: \(podcast.name): sync and download name its new episodes by \(named) from now on, as this archive did; the files named before keep their names")
            }
        case .feedFailed(let url, let error):
            context.error(LibrarySession.feedFailure(url, error))
        case .pageFailed(let podcast, let summary):
            if let warning = summary.pageWarning(for: podcast) { context.error(warning) }
        case .refused(let podcast, let reason):
            context.error("\(podcast.name): \(reason)")
        case .manifestFailed(let podcast, let error):
            context.error("\(podcast.name): cannot update its manifest: \(error)")
        case .warning(let podcast, let warning):
            context.error("\(podcast.name): \(warning)")
        case .deletedEarlierVersion(let file):
            if global.verbose { context.errors.line("monsoon: deleted the earlier version \(file)") }
        case .scanFailed(let podcast, let error):
            context.error("cannot look for new versions of \(podcast.name): \(LibrarySession.message(error)); its feed is archived all the same")
        case .newVersion(let podcast, let title, let reason, let problem?):
            context.error("\(podcast.name): \(title): a new version (\(reason)), but the archived file cannot be read (\(problem)); "
                          + "it was left as it is, and is looked at again on the next run")
        case .newVersion(let podcast, let title, let reason, nil):
            if !global.quiet && !output.json {
                context.errors.line("monsoon: \(podcast.name): \(title): a new version (\(reason)); "
                                    + ((versions ?? .all) == .all ? "the earlier file is kept" : "the earlier file goes once the new one is in"))
            }
        case .versionsLeft(let podcast, let left):
            if !global.quiet && !output.json {
                context.errors.line("monsoon: \(podcast.name): \(left) more new version\(left == 1 ? "" : "s") left for a later run (--limit)")
            }
        }
    }

    /// With the lock: the downloads go into the engine's queue, and only they run here.
    private func run(_ requests: consuming [DownloadRequest], lock: HomeLock, episodes: EpisodeSession, recording: WARCArchive?, reporter: GetReporter,
                     observe: @escaping @Sendable (DownloadEvent) -> Void, context: CommandContext) async throws -> Int32 {
        defer { withExtendedLifetime(lock) {} }
        var configuration = try transfer.configuration(scope: .claimedOnly, home: episodes.home, context: context, jobs: Archive.defaultJobs)
        configuration.maxFileBytes = maxSize?.bytes
        configuration.warc = recording
        let ids = requests.map(\.id)
        let retriable = try episodes.place(requests, what: "the archive's downloads")
        _ = consume requests   // queued: the store holds them now, not this run's memory
        // The queued ones are claimed as the engine opens, with no read of their rows.
        let toRetry = Set(retriable)
        let session = try await QueueRun.open(episodes.home, configuration: configuration, claiming: ids.filter { !toRetry.contains($0) },
                                              context: context, global: global)
        let manager = session.manager
        do {
            // Failed, paused, waiting or finished-but-gone ones start again: this run asks for them.
            // Claimed and retried in one turn of the transfer thread, so none starts before its retry
            // (one that failed at once would be asked for twice), and their rows are read once. Only
            // those a retry can change (a first archive of ten thousand episodes read them all for nothing).
            try await manager.retry(retriable, claiming: true)
        } catch {
            throw await QueueRun.shutDown(manager, failing: CLIError(error, "cannot start the archive's downloads"), context: context)
        }
        // A link refused because it expired (a private feed's) is renewed from the feed.
        let renewal = LinkRenewal(manager: manager, databasePath: episodes.home.databasePath, downloads: ids)
        return await session.run(reporting: reporter, renewing: renewal, observe: observe)
    }

    /// Another monsoon runs the queue: the downloads are handed to it and followed.
    private func handOver(_ requests: [DownloadRequest], episodes: EpisodeSession, reporter: GetReporter,
                          observe: @escaping @Sendable (DownloadEvent) -> Void, context: CommandContext) async throws -> Int32 {
        var last = 0
        var retried = Set<DownloadID>()
        try CLIError.prefixing("cannot hand the archive's downloads to the running monsoon") {
            var fresh: [DownloadRequest] = []
            for request in requests {
                if let existing = try episodes.store.download(withID: request.id) {
                    if existing.status == .failed || existing.status == .paused || existing.status == .completed { retried.insert(request.id) }
                } else {
                    fresh.append(request)
                }
            }
            last = try episodes.store.post(requests.filter { retried.contains($0.id) }.map { .retry($0.id) })
            if !(try episodes.store.add(fresh)).isEmpty { last = try episodes.store.post([.adoptNewDownloads]) }
            last = try episodes.store.post(requests.map { .claim($0.id, by: getpid()) })
        }
        var follower = HandOffFollower(global: global, transfer: transfer, home: episodes.home, store: episodes.store, reporter: reporter, context: context,
                                       jobs: Archive.defaultJobs)
        follower.observe = observe
        follower.maxFileBytes = maxSize?.bytes
        return try await follower.follow(handedThrough: last, retried: retried)
    }

    /// A planning step's failure, in the words the command has always used for it.
    private static func failure(_ failure: ArchiveRun.PlanError) -> CLIError {
        switch failure.step {
        case .readingQueue: EpisodeSession.failure(failure.error, doing: "read the episode queue")
        case .changingQueue: EpisodeSession.failure(failure.error, doing: "change the episode queue")
        case .checkingManifests: CLIError(failure.error)
        case .planningDownloads: CLIError(message: "cannot plan the downloads: \(failure.error)")
        case .savingFeed: CLIError(message: "cannot save the feed snapshot: \((failure.error as? EpisodeFileError)?.message ?? "\(failure.error)")")
        }
    }

    /// The last word: downloaded, skipped, failed, bytes, time, average speed.
    private func summarize(_ tally: GetReporter.Tally, skipped: Int, missing: Int, failedFeeds: Int, started: Date, context: CommandContext) {
        let seconds = max(0.001, Date().timeIntervalSince(started))
        let bytes = tally.bytes
        // The speed is what was transferred: bytes resumed from parts cost no time.
        let transferred = tally.transferred
        let speed = Double(transferred) / seconds
        if output.json {
            context.output.line(GetReporter.jsonLine("summary", [
                ("downloaded", String(tally.completed)), ("skipped", String(skipped + tally.alreadyThere - tally.failedThere)), ("missing", String(missing)),
                ("failed", String(tally.failed)), ("feedsFailed", String(failedFeeds)),
                ("paused", String(tally.paused)), ("removed", String(tally.removed)), ("waitingForSpace", String(tally.waitingForSpace)),
                ("interrupted", String(tally.interrupted)), ("notStarted", String(tally.notStarted)), ("bytes", String(bytes)),
                ("transferredBytes", String(transferred)), ("resumedBytes", String(tally.resumed)),
                ("seconds", JSONText.number((seconds * 1000).rounded() / 1000)), ("bytesPerSecond", JSONText.number(speed.rounded())),
            ]))
            return
        }
        guard !global.quiet || tally.failed + failedFeeds > 0 else { return }
        var counts = ["archived: \(tally.completed) downloaded", "\(skipped + tally.alreadyThere - tally.failedThere) skipped (already archived)", "\(tally.failed) failed"]
        // Whatever was left unfinished, with why.
        for (count, what) in [(tally.waitingForSpace, "left queued for lack of disk space"), (tally.paused, "paused"), (tally.removed, "removed"),
                              (tally.interrupted, "interrupted"), (tally.notStarted, "not started"),
                              (failedFeeds, failedFeeds == 1 ? "feed not read" : "feeds not read")] where count > 0 {
            counts.append("\(count) \(what)")
        }
        // Nothing said of bytes when none moved: `0 B transferred in 0.0 s (0 B/s)` tells nothing.
        let amounts = [transferred > 0 ? "\(ByteCount.format(transferred)) transferred in \(String(cFormat: "%.1f", seconds)) s (\(ByteCount.format(Int(speed)))/s)" : nil,
                       tally.resumed > 0 ? "\(ByteCount.format(tally.resumed)) resumed from parts" : nil].compactMap { $0 }
        // Last, so the counts before keep their places for scripts; the way back with it.
        let missed = missing > 0 ? ["\(missing) missing from disk: run with --refetch-missing to fetch \(missing == 1 ? "it" : "them") again"] : []
        // A line or more per section, none wider than a terminal: the counts first, for scripts.
        for line in [counts, amounts, missed].flatMap({ SummaryLines.packed($0) }) { context.errors.line(line) }
    }
}
