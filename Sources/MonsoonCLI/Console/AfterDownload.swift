import FoundationEssentials
import Glibc
import Synchronization
import MonsoonEngine
import MonsoonPodcasts
import MonsoonStore

/// What a command does with each of its files once it is in place (`--write-info-json`,
/// `--exec`): the sidecar first, then the hook. The reporter hands it every completion it sees
/// (the engine's own, or the rows of a run it follows); the work runs on threads of its own, at
/// most `--exec-jobs` at once, never on the engine's transfer thread nor on Swift's cooperative
/// pool (a hook may run for minutes). `settle` ends it: files the run answers for that were
/// complete already get their missing sidecars and owed hooks, then it waits for everything.
///
/// Ctrl-C (or SIGTERM) of the run: no new hook starts, the running ones' process groups get
/// SIGTERM (a hook runs in a group of its own, so a Ctrl-C typed at the terminal reaches it only
/// this way) and their programs are waited for; each is recorded failed, so the next run of the
/// command runs it again.
final class AfterDownload: Sendable {
    let writesInfoJSON: Bool
    /// Podcasts whose archive was made with `--write-info-json` (`ArchiveRun.Remembered`): their episodes get sidecars in every run.
    let infoJSONPodcasts: Set<Int>
    let hook: HookCommand?
    private let jobs: Int
    /// The home's database: its path, not the `Home`, whose copy would keep the settings'
    /// connection open to the end (the reporter and this hold each other that long).
    private let databasePath: String
    let context: CommandContext
    let reporter: GetReporter
    let state = Mutex(State())
    /// `oweTakenIn`'s connection, made at its first use (events come one at a time; the lock makes sure).
    private let addedLedger = Mutex<HookLedger?>(nil)

    struct State {
        var queue: [Job] = []
        var threads = 0
        /// Downloads handled (or being handled) in this run: a completion seen twice is one.
        var handled = Set<DownloadID>()
        var running = Set<pid_t>()
        var stopping = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// What `settle` catches up on (`catchUp(_:wholeQueue:)`).
        var catchUp: [DownloadID] = []
        var allOwed = false
    }

    struct Job: Sendable {
        var download: Download
        /// Completed in this run (else complete before, and caught up by `settle`).
        var fresh: Bool
        var runsHook: Bool
    }

    init(options: AfterDownloadOptions, infoJSONPodcasts: Set<Int>, home: Home, context: CommandContext, reporter: GetReporter) {
        (writesInfoJSON, self.infoJSONPodcasts) = (options.writeInfoJSON, infoJSONPodcasts)
        hook = options.hook
        jobs = options.execJobs ?? AfterDownloadOptions.defaultJobs
        databasePath = home.databasePath
        self.context = context
        self.reporter = reporter
    }

    /// The after-download work of a command, when its options or an archive's (sidecars) ask for any;
    /// registered with `reporter`, which hands it the completions and lets it settle before the summary.
    /// `episodes`: the command downloads episodes, so archives' remembered sidecars apply (a `get`
    /// does not pay for reading them).
    static func start(_ options: AfterDownloadOptions, episodes: Bool = true, home: Home, context: CommandContext, reporter: GetReporter) throws -> AfterDownload? {
        var podcasts = Set<Int>()
        if episodes {
            let archives = try CLIError.prefixing("cannot read the settings") { try Settings(database: try Database(path: home.databasePath)).archives() }
            podcasts = Set(archives.filter(\.value.infoJSON).keys)
        }
        guard options.isActive || !podcasts.isEmpty else { return nil }
        let after = AfterDownload(options: options, infoJSONPodcasts: podcasts, home: home, context: context, reporter: reporter)
        reporter.register(after)
        return after
    }

    /// Which downloads get a sidecar and a hook, by their owner (never their id's letter):
    /// episodes' and plain ones (`get`'s), not an archive's artwork, transcripts or chapters,
    /// a repair's nor a cluster job's.
    static func applies(to owner: DownloadOwner) -> Bool {
        owner == .episode || owner == .direct
    }

    /// A download to fetch, as `owe` takes it: its owner says whether it owes a hook.
    typealias Owed = (id: DownloadID, owner: DownloadOwner)

    /// Before the run: these downloads are to be fetched, so their next files owe the hook a run
    /// (a kill between a file's rename and its hook leaves it owed for the next run). Recorded
    /// before the engine may start them.
    func owe(_ downloads: [Owed]) throws {
        guard hook != nil else { return }
        try Self.owe(downloads, databasePath: databasePath)
    }

    /// `owe(_:)`, before the reporter (and so this) exists: `download` records them before the engine starts.
    static func owe(_ downloads: [Owed], databasePath: String) throws {
        let ids = downloads.filter { applies(to: $0.owner) }.map(\.id)
        guard !ids.isEmpty else { return }
        do {
            try HookLedger(database: try Database(path: databasePath)).owe(ids)
        } catch {
            throw CLIError(error, "cannot record the hooks this run owes")
        }
    }

    /// Adds `requests` to the home's queue and, with `--exec`, records their hooks as owed, in one
    /// transaction: no process can start one before its hook is recorded.
    /// - Returns: their ids.
    func add(_ requests: [DownloadRequest]) throws -> [DownloadID] {
        guard !requests.isEmpty else { return [] }
        let database = try Database(path: databasePath)
        let store = try DownloadStore(database: database)
        let ledger = hook == nil ? nil : try HookLedger(database: database)
        return try database.write {
            let ids = try store.add(requests)
            try ledger?.owe(zip(requests, ids).filter { Self.applies(to: $0.0.owner) }.map(\.1))
            return ids
        }
    }

    /// A download another command queued, just taken in by this run (`download`, `sync`): owed
    /// at once. The engine may start it before this is written (it does not wait for it), so a
    /// kill in that moment, with the file already in place, loses its hook: the one exception to
    /// "owed before it starts", which docs/REFERENCE.md states.
    func oweTakenIn(_ download: Download) {
        let id = download.id
        guard hook != nil, Self.applies(to: download.request.owner) else { return }
        do {
            try addedLedger.withLock { ledger in
                if ledger == nil { ledger = try HookLedger(database: try Database(path: databasePath)) }
                try ledger?.owe([id])
            }
        } catch {
            // Its hook still runs when it completes in this run (the claim takes a download with no row).
            reporter.afterDownloadProblem("cannot record that \(id.rawValue) owes its hook a run: \(error)")
        }
    }

    /// A download of the run completed (called by the reporter, under its lock: only queues).
    func completed(_ download: Download) {
        guard Self.applies(to: download.request.owner), download.filePath != nil else { return }
        enqueue([Job(download: download, fresh: true, runsHook: hook != nil)])
    }

    /// At the end, `ids` that are complete (those done before this run, and those another
    /// process ran) get their missing sidecars and the hooks they owe; with `wholeQueue`
    /// (`download` and `sync`, which run the whole queue), every download of the home that owes
    /// a hook run too, and every completed episode of the queue whose sidecar is missing (an
    /// earlier run was killed, or failed, before it wrote it).
    func catchUp(_ ids: [DownloadID], wholeQueue: Bool = false) {
        state.withLock { state in
            state.catchUp += ids
            state.allOwed = state.allOwed || wholeQueue
        }
    }

    /// The run has ended: unless it was interrupted, the downloads to catch up on get theirs
    /// (`catchUp(_:wholeQueue:)`); then waits for all of it. A Ctrl-C meanwhile stops it too.
    /// - Returns: whether the run is interrupted (before, or while this waited).
    func settle(interrupted: Bool) async -> Bool {
        // The interruption is the run's to handle (`Interruption.handling`): while hooks run, it stops them.
        let watcher = Task { [self] in
            await context.interruption.wait()
            if context.interruption.isTriggered { stop() }
        }
        defer { watcher.cancel() }
        if interrupted {
            stop()
        } else {
            let (catchUp, allOwed) = state.withLock { ($0.catchUp, $0.allOwed) }
            do { enqueue(try catchUpJobs(catchUp, wholeQueue: allOwed)) } catch {
                reporter.afterDownloadProblem("cannot look up the files already there for their metadata and hooks: \(error)")
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                guard state.threads > 0 else { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
        // Nothing more is taken in: its connection closes now, not at exit (a connection left
        // open at exit leaves the home's log file behind, its changes merged only next time).
        addedLedger.withLock { $0 = nil }
        return interrupted || context.interruption.isTriggered
    }

    /// No hook starts any more; the running ones are asked to end.
    private func stop() {
        let running = state.withLock { state -> Set<pid_t> in
            state.stopping = true
            state.queue.removeAll()
            return state.running
        }
        for pid in running { HookProcess.terminate(pid, grace: .seconds(context.timings.hookGrace)) }
    }

    private func catchUpJobs(_ ids: [DownloadID], wholeQueue: Bool) throws -> [Job] {
        let database = try Database(path: databasePath)
        let ledger = hook == nil ? nil : try HookLedger(database: database)
        let store = try DownloadStore(database: database)
        // Rows of downloads the queue forgot (`downloads clear`) owe nothing any more.
        try ledger?.pruneForgotten(keepingThoseIn: store)
        let owed = Set(try ledger?.allOwed() ?? [])
        // Those that get a sidecar (nil: all): without --write-info-json, the episodes of podcasts whose archive asked for them.
        let files = try EpisodeFiles(database: database, downloads: store)
        let sidecars = writesInfoJSON ? nil : Set(try infoJSONPodcasts.flatMap(files.downloaded(podcast:)).map(EpisodeQueue.downloadID(ofEpisode:)))
        var wanted = ids
        if wholeQueue {
            wanted += owed.filter { !ids.contains($0) }.sorted { $0.rawValue < $1.rawValue }
            if sidecars?.isEmpty != true {
                let listed = Set(wanted)
                try store.forEachSummary { summary in
                    guard summary.status == .completed, summary.owner == .episode, !listed.contains(summary.id), sidecars?.contains(summary.id) != false,
                          let path = summary.filePath, !Self.isFile(InfoSidecar.path(for: path)) else { return }
                    wanted.append(summary.id)
                }
            }
        }
        let handled = state.withLock { $0.handled }
        wanted = wanted.filter { !handled.contains($0) }
        guard !wanted.isEmpty else { return [] }
        return try store.downloads(withIDs: wanted).compactMap { download in
            guard Self.applies(to: download.request.owner), download.status == .completed, let path = download.filePath, LocalFile.size(at: path) != nil else { return nil }
            let runsHook = owed.contains(download.id)
            let needsSidecar = sidecars?.contains(download.id) != false && !Self.isFile(InfoSidecar.path(for: path))
            return runsHook || needsSidecar ? Job(download: download, fresh: false, runsHook: runsHook) : nil
        }
    }

    private func enqueue(_ jobs: [Job]) {
        guard !jobs.isEmpty else { return }
        let starting = state.withLock { state -> Int in
            guard !state.stopping else { return 0 }
            for job in jobs where state.handled.insert(job.download.id).inserted { state.queue.append(job) }
            let starting = min(self.jobs - state.threads, state.queue.count)
            state.threads += max(0, starting)
            return max(0, starting)
        }
        for _ in 0..<starting {
            NamedThread.detach(named: "monsoon.after") { [self] in work() }
        }
    }

    /// One worker: takes jobs until none is left, with a connection of its own, closed before
    /// the thread counts as ended (the last one wakes `settle`, and the process may exit then).
    private func work() {
        var waiters: [CheckedContinuation<Void, Never>]?
        repeat {
            do {
                var worker: Worker?
                while let job = next() {
                    do {
                        if worker == nil { worker = try Worker(databasePath: databasePath, needsLedger: hook != nil) }
                        if let worker { perform(job, with: worker) }
                    } catch {
                        reporter.afterDownloadFailed(job.download.id, line: "\(Self.label(job.download)): cannot open the library for its metadata and hook: \(error)",
                                                     json: ("afterDownload", [("error", JSONText.string("\(error)"))]))
                    }
                }
            }
            waiters = retire()
        } while waiters == nil
        for waiter in waiters ?? [] { waiter.resume() }
    }

    private func next() -> Job? {
        state.withLock { state in !state.queue.isEmpty && !state.stopping ? state.queue.removeFirst() : nil }
    }

    /// Ends the thread, unless jobs came meanwhile (nil: it takes them; `enqueue` counted it
    /// running). The last thread to end gets `settle`'s waiters to wake.
    private func retire() -> [CheckedContinuation<Void, Never>]? {
        state.withLock { state in
            if !state.queue.isEmpty && !state.stopping { return nil }
            state.threads -= 1
            guard state.threads == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
    }

    /// A connection for a worker thread, confined to it.
    struct Worker {
        let database: Database
        let ledger: HookLedger?

        init(databasePath: String, needsLedger: Bool) throws {
            database = try Database(path: databasePath)
            ledger = needsLedger ? try HookLedger(database: database) : nil
        }
    }

    /// Whether a regular file is at `path` (a link there is not one: a sidecar is never written through it).
    static func isFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// `e42 (Episode title)`, `d3 (file.mp3)`: how the lines name a download.
    static func label(_ download: Download) -> String {
        "\(download.id.rawValue) (\(GetReporter.name(of: download)))"
    }
}
