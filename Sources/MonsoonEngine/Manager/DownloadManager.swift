import FoundationEssentials
import Synchronization

/// The download engine: a queue of downloads driven by one libcurl multi handle
/// on a dedicated thread.
///
/// Every method may be called from any task. Commands are handed to the
/// transfer thread and answered from it; nothing here blocks Swift's
/// cooperative thread pool.
public final class DownloadManager: Sendable {
    /// The configuration the manager started with, as the engine takes it (its concurrency from 0
    /// to `EngineConfiguration.concurrencyLimit`); limits may change later with `setLimits`.
    public let configuration: EngineConfiguration
    let inbox = EngineInbox()
    let hub = EventHub()
    private let thread: TransferThread
    private let watcher: CommandWatcher?
    private let fetchTokens = Atomic<Int>(0)

    /// A manager whose queue lives in memory only.
    public init(configuration: EngineConfiguration = EngineConfiguration()) {
        self.configuration = configuration.asTaken
        thread = TransferThread(configuration: self.configuration, inbox: inbox, hub: hub, store: nil)
        watcher = nil
    }

    /// A manager whose queue is kept in the SQLite database at `databasePath`
    /// (created when missing) and restored from it: downloads that were running
    /// resume from their part files, those waiting to retry keep their time, and
    /// completed, paused and failed ones stay so.
    ///
    /// - Parameter watchesOtherProcesses: apply the commands other processes post
    ///   to this database (`DownloadStore.post`) within about a second.
    /// - Throws: `StoreError` when the database cannot be opened, is damaged, or is
    ///   from a newer Monsoon; the file is then left untouched.
    /// - Important: opening blocks the calling thread: it opens a connection, may create or
    ///   migrate the tables and may wait for another process's lock (up to the configuration's
    ///   `storeBusyTimeout`). From async code, use `open(configuration:databasePath:watchesOtherProcesses:)`.
    public convenience init(configuration: EngineConfiguration = EngineConfiguration(), databasePath: String, watchesOtherProcesses: Bool = true) throws {
        self.init(configuration: configuration, connections: try Connections(
            databasePath: databasePath, watching: watchesOtherProcesses, busyTimeout: configuration.storeBusyTimeout))
    }

    /// A manager whose queue is kept in `store`, a `QueueStore` the caller opened (PostgreSQL's,
    /// say), and restored from it as from a SQLite file. The store goes to the disk worker's
    /// thread, the only one to use it from now on; no command watcher runs.
    package convenience init(configuration: EngineConfiguration, store: any QueueStore) {
        self.init(configuration: configuration, connections: Connections(worker: store, openWatcher: nil))
    }

    /// A manager on connections opened beforehand (see `open`): starting it does not block.
    /// - Parameter subscribe: called with the events' hub before anything can happen.
    init(configuration: EngineConfiguration, connections: Connections, claiming: [DownloadID] = [], subscribe: (EventHub) -> Void = { _ in }) {
        self.configuration = configuration.asTaken
        subscribe(hub)
        // The loop's first job, before the thread exists: ahead of every row the restore hands it.
        if !claiming.isEmpty { inbox.post { $0.claimBeforeRestore(claiming) } }
        thread = TransferThread(configuration: self.configuration, inbox: inbox, hub: hub, store: connections.worker)
        if let open = connections.openWatcher {
            watcher = CommandWatcher(open: open, after: connections.left, inbox: inbox)
        } else {
            watcher = nil
        }
    }

    deinit {
        // Without an explicit `shutdown()`, the thread still stops and releases curl.
        watcher?.stop()
        inbox.post { $0.stop() }
    }

    /// Runs `body` on the transfer thread, with the records of `ids` at hand (read by the disk
    /// worker when not in memory), and returns its answer once what it changed is saved (a
    /// failure to save it is the answer then).
    func perform<T: Sendable>(rows ids: [DownloadID] = [], _ body: @escaping @Sendable (EngineLoop, CommandReply<T>) -> Void) async throws(DownloadManagerError) -> T {
        let inbox = self.inbox
        let result: Result<T, DownloadManagerError> = await withCheckedContinuation { continuation in
            let reply = CommandReply<T> { continuation.resume(returning: $0) }
            let posted = inbox.post { loop in
                guard !loop.isStopping else { return reply.shutDown() }
                loop.withRows(ids, ifClosed: reply.shutDown) { loop, read in
                    guard !loop.isStopping else { return reply.shutDown() }
                    if case .failure(let error) = read { return loop.answer(reply, .failure(error)) }
                    body(loop, reply)
                }
            }
            if !posted { reply.shutDown() }
        }
        return try result.get()
    }

    /// Runs `body` on the transfer thread and answers at once, not once the saves under way are
    /// done as `perform` does: for the tests that look at the loop while another process holds
    /// the database, which holds those saves. Nothing else calls it.
    func peek<T: Sendable>(_ body: @escaping @Sendable (EngineLoop) -> T) async throws(DownloadManagerError) -> T {
        let inbox = self.inbox
        let result: Result<T, DownloadManagerError> = await withCheckedContinuation { continuation in
            let posted = inbox.post { loop in
                continuation.resume(returning: loop.isStopping ? .failure(.shutDown) : .success(body(loop)))
            }
            if !posted { continuation.resume(returning: .failure(.shutDown)) }
        }
        return try result.get()
    }

    /// `perform` for a command that answers at once.
    func perform<T: Sendable>(rows ids: [DownloadID] = [], now body: @escaping @Sendable (EngineLoop) -> Result<T, DownloadManagerError>) async throws(DownloadManagerError) -> T {
        try await perform(rows: ids) { loop, reply in loop.answer(reply, body(loop)) }
    }

    /// Adds a download to the queue.
    ///
    /// - Throws: `.duplicate` when the id exists, unless `replacingExisting` (which
    ///   stops the old download and removes its part file); `.invalidRequest` for a
    ///   URL that is not http or https.
    ///
    /// - Returns: the download's id: the request's, or `d<N>` when the request's id is empty.
    @discardableResult
    public func enqueue(_ request: DownloadRequest, replacingExisting: Bool = false) async throws(DownloadManagerError) -> DownloadID {
        try await enqueue(contentsOf: [request], replacingExisting: replacingExisting)[0]
    }

    /// Adds many downloads at once (all or none; one transaction when persistent).
    @discardableResult
    public func enqueue(contentsOf requests: [DownloadRequest], replacingExisting: Bool = false) async throws(DownloadManagerError) -> [DownloadID] {
        try await perform(rows: requests.map(\.id).filter { !$0.rawValue.isEmpty }) { $0.enqueue(requests, replacing: replacingExisting, reply: $1) }
    }

    /// Stops a download, keeping its bytes for a later `resume`.
    public func pause(_ id: DownloadID) async throws(DownloadManagerError) {
        try await perform(rows: [id], now: { $0.pause(id) })
    }

    /// Queues a paused or failed download again; it resumes from its part file.
    public func resume(_ id: DownloadID) async throws(DownloadManagerError) {
        try await perform(rows: [id], now: { $0.resume(id) })
    }

    /// Queues failed downloads (or ones waiting to retry) now, with fresh retry counters; a
    /// completed one whose file has gone is fetched again. A trip to the transfer thread for each
    /// `rowsPerTrip` of them, whose changes are saved in batches, not one by one.
    /// - Parameter claiming: claims them too, as `claim(_:)` does, before any is retried and in the
    ///   same trip: their rows are read once, not once per command, and none starts before its retry.
    /// - Throws: `.notFound` for an unknown id (those of earlier trips are retried already; in its
    ///   own trip, nothing is claimed or retried).
    public func retry(_ ids: [DownloadID], claiming: Bool = false) async throws(DownloadManagerError) {
        for part in Self.trips(ids) { try await perform(rows: part) { $0.retry(part, claiming: claiming, reply: $1) } }
    }

    /// A command on many downloads reads their rows into memory first, all of a trip's at once:
    /// this bounds them, whatever the number of downloads.
    static let rowsPerTrip = 1_000

    private static func trips(_ ids: [DownloadID]) -> [[DownloadID]] {
        stride(from: 0, to: ids.count, by: rowsPerTrip).map { Array(ids[$0..<min(ids.count, $0 + rowsPerTrip)]) }
    }

    /// Forgets a download. Its `.part` file is always deleted; a completed file only if `deleteFile`.
    public func remove(_ id: DownloadID, deleteFile: Bool = false) async throws(DownloadManagerError) {
        try await perform(rows: [id], now: { $0.remove(id, deleteFile: deleteFile) })
    }

    /// Forgets many downloads in one trip to the transfer thread, each as `remove(_:deleteFile:)` does.
    /// - Returns: the ids that were not there (never added, or removed already).
    @discardableResult
    public func remove(contentsOf ids: [DownloadID], deleteFile: Bool = false) async throws(DownloadManagerError) -> [DownloadID] {
        try await perform(rows: ids, now: { loop in
            .success(ids.filter { if case .failure = loop.remove($0, deleteFile: deleteFile) { true } else { false } })
        })
    }

    /// Takes in the downloads other connections added to the store (`DownloadStore.add`) since
    /// the last it knew of, as a command of another process does: a `.claimedOnly` engine keeps
    /// them queued until they are claimed, so a caller can record what it needs about their ids
    /// between adding and starting them.
    public func adoptStoredDownloads() async throws(DownloadManagerError) {
        try await perform { $0.adoptNewRows(replying: [$1]) }
    }

    /// Lets an engine with `QueueScope.claimedOnly` start these stored downloads (no effect
    /// with `.wholeQueue`, which starts everything queued). Unknown ids are ignored.
    public func claim(_ ids: [DownloadID]) async throws(DownloadManagerError) {
        for part in Self.trips(ids) { try await perform(rows: part, now: { $0.claim(part) }) }
    }

    /// Pauses every download that would run (also those a `.claimedOnly` engine does not run).
    /// - Throws: `.storage` when the queue cannot be read or saved (nothing may have changed).
    public func pauseAll() async throws(DownloadManagerError) {
        try await perform { $0.pauseAll(reply: $1) }
    }

    /// Queues every paused download again.
    /// - Throws: `.storage` when the queue cannot be read or saved.
    public func resumeAll() async throws(DownloadManagerError) {
        try await perform { $0.resumeAll(reply: $1) }
    }

    /// Changes a download's priority; it applies the next time a transfer starts.
    public func setPriority(_ priority: Int, for id: DownloadID) async throws(DownloadManagerError) {
        try await perform(rows: [id], now: { $0.setPriority(priority, for: id) })
    }

    /// Changes the global and per-host limits (`perHost: .some(nil)` removes the
    /// per-host limit). Running transfers are not interrupted; a global limit of 0
    /// holds every queued download until it is raised again.
    public func setLimits(maxConcurrent: Int? = nil, perHost: Int?? = nil) async {
        // It fails after a shutdown (no limits left to set) or when a save failed since the last
        // command: that failure is the saves' to report, and `shutdown()` answers it.
        _ = try? await perform(now: { loop -> Result<Void, DownloadManagerError> in
            loop.setLimits(maxConcurrent: maxConcurrent, perHost: perHost)
            return .success(())
        })
    }

    /// Every download, in enqueue order.
    /// - Throws: `.storage` when the queue cannot be read (never reported as an empty queue).
    public var downloads: [Download] {
        get async throws(DownloadManagerError) { try await perform { $0.snapshots(reply: $1) } }
    }

    /// The downloads of one URL, in enqueue order (an index lookup with a store).
    /// - Throws: `.storage` when the queue cannot be read.
    public func downloads(of url: URL) async throws(DownloadManagerError) -> [Download] {
        try await downloads(of: [url]).first ?? []
    }

    /// The downloads of each URL, in enqueue order: one trip to the transfer thread for all.
    /// - Throws: `.storage` when the queue cannot be read (never reported as "none").
    public func downloads(of urls: [URL]) async throws(DownloadManagerError) -> [[Download]] {
        try await perform { $0.downloads(of: urls, reply: $1) }
    }

    /// How many downloads are in each status, without building them.
    /// - Throws: `.storage` when the queue cannot be read.
    public func counts() async throws(DownloadManagerError) -> [DownloadStatus: Int] {
        try await perform { $0.counts(reply: $1) }
    }

    /// One download, or nil when no download has that id.
    /// - Throws: `.storage` when the queue cannot be read (never reported as "not found").
    public func download(withID id: DownloadID) async throws(DownloadManagerError) -> Download? {
        try await perform(rows: [id], now: { .success($0.snapshot(of: id)) })
    }

    /// A new stream of events from now on: those of `kinds` (all by default). Asking only for
    /// what is used keeps a large enqueue cheap: nobody asking for `.added`, none is built.
    public func events(_ kinds: DownloadEvent.Kinds = .all) -> DownloadEvents {
        hub.subscribe(kinds)
    }

    /// Returns once nothing is queued, downloading or waiting to retry.
    public func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let posted = inbox.post { loop in
                loop.whenIdle(continuation)
            }
            if !posted { continuation.resume() }
        }
    }

    /// Stops every transfer (keeping part files, flushed, with their state saved),
    /// releases curl and ends the thread.
    ///
    /// - Returns: the last failure to save the queue in this manager's life, if a save failed:
    ///   the final one, made here to keep the downloads' last bytes, included. Nil when every
    ///   save worked. The part files' bytes are safe either way (a restart re-reads them).
    @discardableResult
    public func shutdown() async -> Error? {
        watcher?.stop()
        await watcher?.join()
        inbox.post { $0.stop() }
        await thread.join()
        return inbox.saveFailures.last
    }

    /// The last failure to save or read the queue, if any (downloads go on meanwhile; their
    /// bytes are safe, and a restart re-reads the part files). After `shutdown()`, the last
    /// failure to save, the final save's included.
    public func persistenceError() async -> Error? {
        // After a trip through the disk worker: its failures so far have reached the loop.
        do {
            let box = try await perform { (loop: EngineLoop, reply: CommandReply<ErrorBox?>) in loop.lastStoreError(reply: reply) }
            return box?.error
        } catch .shutDown {
            // Nothing runs any more, and the loop with its failures is gone: the saves' are kept apart.
            return inbox.saveFailures.last
        } catch {
            return error   // a save failed on the way: that is the latest failure
        }
    }

    /// Fetches a small body into memory, following redirects (http and https
    /// only) and retrying transient failures per the retry policy (a host that
    /// cannot be reached only when `request.retriesConnectionFailures`).
    ///
    /// The waits between attempts (the backoff, a `Retry-After`) are measured on
    /// `configuration.clock`, as a download's are: the transfer thread starts the
    /// next attempt once that clock reaches its time. Cancelling the task ends a
    /// fetch at once, also while it waits.
    ///
    /// - Returns: the final response, whatever its status (a 304 or 404 is an
    ///   answer; 408, 429 and 5xx are retried first).
    /// - Throws: `DownloadError` for network failures after the retries, a body
    ///   over `maxBytes`, an unsafe redirect, or cancellation.
    public func fetch(_ request: FetchRequest) async throws(DownloadError) -> FetchResponse {
        let policy = configuration.retry
        let clock = configuration.clock
        var counters = RetryPolicy.Counters()
        var notBefore: Date?
        while true {
            let failure: RetryPolicy.Failure
            switch await fetchOnce(request, notBefore: notBefore) {
            case .cancelled:
                throw DownloadError(.cancelled, "the fetch of \(request.url.absoluteString) was cancelled")
            case .response(let response):
                guard response.status >= 400 else { return response }
                let now = clock.now
                let classified = FailureClassifier.httpFailure(status: response.status, retryAfter: response.header("Retry-After"), now: now)
                guard classified.isTransient,
                      case .retry(let delay, let next) = policy.decide(classified, counters: counters, random: Double.random(in: 0..<1)) else {
                    return response
                }
                counters = next
                notBefore = now.addingTimeInterval(delay)
                continue
            case .failure(let value):
                // Waiting out the backoff for a host that cannot be reached only keeps the user waiting in silence.
                if value.isConnectionFailure && !request.retriesConnectionFailures { throw value.error }
                failure = value
            }
            switch policy.decide(failure, counters: counters, random: Double.random(in: 0..<1)) {
            case .retry(let delay, let next):
                counters = next
                notBefore = clock.now.addingTimeInterval(delay)
            case .fail(let error, _):
                throw error
            }
        }
    }

    /// One attempt, started by the transfer thread once `configuration.clock` reaches `notBefore`.
    private func fetchOnce(_ request: FetchRequest, notBefore: Date?) async -> FetchJob.Outcome {
        let token = fetchTokens.add(1, ordering: .relaxed).newValue
        let inbox = self.inbox
        let box = Locked<FetchJob?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let job = FetchJob(request: request, token: token, notBefore: notBefore, continuation: continuation)
                box.withLock { $0 = job }
                if Task.isCancelled { job.complete(.cancelled); return }
                if !inbox.post({ $0.submitFetch(job) }) { job.complete(.cancelled) }
            }
        } onCancel: {
            // Answer at once; the transfer thread then drops the transfer, or the job if it has
            // not started (waiting for its time or a slot). A job not made yet sees
            // `Task.isCancelled` above.
            if let job = box.withLock({ $0 }) {
                job.complete(.cancelled)
                inbox.post { $0.cancelFetch(token: token) }
            }
        }
    }
}

/// Carries any error out of the transfer thread.
struct ErrorBox: Error, @unchecked Sendable {
    // Safe: the errors the store throws (`StoreError`, `DownloadError`) are Sendable values;
    // the box only erases their type.
    let error: Error
}
