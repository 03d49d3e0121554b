import FoundationEssentials
import Dispatch

/// The transfer thread as the engine's other threads see it: what they may ask of it
/// (`DownloadManager`'s commands, other processes' commands) and what they may tell it
/// (`Message`: the disk worker's and the placer's answers). Nothing more.
///
/// Each job posted to the `EngineInbox` is handed one of these, on the transfer thread. Its one
/// stored property, the `EngineCore` that holds every record and transfer, is private to this
/// file: a job can ask or tell, but never reach into the loop's fields. What only reads the loop,
/// or is made of other commands (the bulk ones, other processes'), is answered here.
struct EngineLoop {
    fileprivate let core: EngineCore

    fileprivate init(_ core: EngineCore) {
        self.core = core
    }

    /// Whether the engine is shutting down: commands answer `.shutDown` from then on.
    var isStopping: Bool { core.stopping }

    /// Ends the loop after this turn: transfers stop, their parts are kept and saved.
    func stop() {
        core.stopping = true
    }

    /// Resumes `waiter` once nothing is queued, downloading or waiting to retry (or at shutdown).
    func whenIdle(_ waiter: CheckedContinuation<Void, Never>) {
        core.events.waitForIdle(waiter)
        core.resumeIdleWaitersIfIdle()
    }

    func receive(_ message: Message) {
        core.receive(message)
    }

    /// Runs `body` with the records of `ids` at hand (read by the disk worker when not in memory).
    func withRows(_ ids: [DownloadID], skippingUnreadable: Bool = false, ifClosed: @escaping @Sendable () -> Void,
                  _ body: @escaping @Sendable (EngineLoop, Result<Void, DownloadManagerError>) -> Void) {
        core.withRows(ids, skippingUnreadable: skippingUnreadable, ifClosed: ifClosed) { core, read in body(EngineLoop(core), read) }
    }

    /// Answers a command once what it changed is saved.
    func answer<T>(_ reply: CommandReply<T>, _ result: Result<T, DownloadManagerError>) {
        reply(core, result)
    }

    /// The last failure to save or read the queue, answered once what the disk worker was
    /// given so far is done (so its failures have arrived).
    func lastStoreError(reply: CommandReply<ErrorBox?>) {
        core.persistence.onWorker({ _ in () }, then: { core, _ in reply(core, .success(core.persistence.storeError.map { ErrorBox(error: $0) })) }, ifClosed: reply.shutDown)
    }

    func enqueue(_ requests: [DownloadRequest], replacing: Bool, reply: CommandReply<[DownloadID]>) {
        core.enqueue(requests, replacing: replacing, reply: reply)
    }

    func pause(_ id: DownloadID) -> Result<Void, DownloadManagerError> { core.perform(.pause, on: id) }
    func resume(_ id: DownloadID) -> Result<Void, DownloadManagerError> { core.perform(.resume, on: id) }

    /// Retries failed or waiting downloads now; completed ones whose files have gone are fetched
    /// again (the disk worker looks for all their files in one job). An unknown id fails the
    /// command before anything changes. `claiming`: claimed first (`DownloadManager.retry(_:claiming:)`).
    func retry(_ ids: [DownloadID], claiming: Bool = false, reply: CommandReply<Void>) {
        var completed: [(id: DownloadID, path: String)] = []
        var others: [DownloadID] = []
        for id in ids {
            guard let record = core.records[id] else { return answer(reply, .failure(.notFound(id))) }
            if record.status == .completed, let path = record.filePath { completed.append((id, path)) } else { others.append(id) }
        }
        if claiming { _ = core.claim(ids) }   // cannot fail
        for id in others { core.perform(.retry(fileGone: false), on: id) }
        guard !completed.isEmpty else { return answer(reply, .success(())) }
        // Kept in memory while the disk worker looks: a removal meanwhile is then seen.
        for each in completed {
            core.records.update(each.id) { _ in }
            core.records.hold(each.id)
        }
        let paths = completed.map(\.path)
        core.persistence.onWorker({ _ in paths.map { !PartFile.exists($0) } }, then: { [completed] loop, gone in
            for (each, fileGone) in zip(completed, gone) {
                if loop.records.isHot(each.id) { loop.perform(.retry(fileGone: fileGone), on: each.id) }
                loop.records.letGo(each.id)
            }
            reply(loop, .success(()))
        }, ifClosed: reply.shutDown)
    }

    func remove(_ id: DownloadID, deleteFile: Bool) -> Result<Void, DownloadManagerError> { core.remove(id, deleteFile: deleteFile) }
    func claim(_ ids: [DownloadID], by claimant: Int32 = EngineCore.ownClaim) -> Result<Void, DownloadManagerError> { core.claim(ids, by: claimant) }
    /// Claims `ids` before the restore hands in any row (`DownloadManager.open`'s `claiming`; `DownloadScheduler.claimAhead`).
    func claimBeforeRestore(_ ids: [DownloadID]) { core.scheduler.claimAhead(ids, by: EngineCore.ownClaim) }
    func release(_ id: DownloadID, by claimant: Int32) { core.release(id, by: claimant) }
    func adoptNewRows(replying replies: [CommandReply<Void>]) { core.adoptNewRows(replying: replies) }
    func setPriority(_ priority: Int, for id: DownloadID) -> Result<Void, DownloadManagerError> { core.setPriority(priority, for: id) }

    func setLimits(maxConcurrent: Int?, perHost: Int??) {
        core.configuration.setLimits(maxConcurrent: maxConcurrent, perHost: perHost)
        core.scheduler.needsScheduling = true
    }

    /// Pauses every download that would run (with `.claimedOnly`, also those only in the store); one
    /// removed meanwhile answers `.notFound`, ignored: nothing left to pause.
    func pauseAll(reply: CommandReply<Void>) {
        let (scheduler, space) = (core.scheduler, core.space)
        var active = Set(scheduler.queue.entries.map(\.id)).union(scheduler.waiting).union(scheduler.starting.keys).union(space.holds.keys)
        active.formUnion(core.records.hot.values.filter { $0.status == .downloading }.map(\.request.id))
        let stored: [DownloadStatus] = scheduler.claimed != nil ? [.queued, .waitingToRetry, .downloading] : []
        forAll(active, andStored: stored, failing: "pause every download", { loop, id in loop.core.perform(.pause, on: id) }, reply: reply)
    }

    func resumeAll(reply: CommandReply<Void>) {
        let paused = Set(core.records.hot.values.filter { $0.status == .paused }.map(\.request.id))
        forAll(paused, andStored: [.paused], failing: "resume every paused download", { loop, id in loop.core.perform(.resume, on: id) }, reply: reply)
    }

    /// Applies `body` to `ids` and, with a store, to the downloads whose rows have one of
    /// `statuses`, in order of id.
    private func forAll(_ ids: Set<DownloadID>, andStored statuses: [DownloadStatus], failing what: String,
                        _ body: @escaping @Sendable (EngineLoop, DownloadID) -> Void, reply: CommandReply<Void>) {
        guard core.persistence.persistent, !statuses.isEmpty else { return forEach(Array(ids), body, reply: reply) }
        core.persistence.read({ store in try statuses.flatMap { try store.ids(withStatus: $0) } }, failing: what, reply: reply) { core, found in
            EngineLoop(core).forEach(ids.union(found).sorted(), body, reply: reply)
        }
    }

    /// Applies `body` to each of `ids`, with their records read a chunk at a time (so a large
    /// queue is never all in memory), then replies.
    private func forEach(_ ids: [DownloadID], chunk: Int = 500, _ body: @escaping @Sendable (EngineLoop, DownloadID) -> Void, reply: CommandReply<Void>) {
        guard !ids.isEmpty else { return answer(reply, .success(())) }
        let head = Array(ids.prefix(chunk))
        withRows(head, ifClosed: reply.shutDown) { loop, read in
            if case .failure(let error) = read { return loop.answer(reply, .failure(error)) }
            for id in head { body(loop, id) }
            loop.forEach(Array(ids.dropFirst(chunk)), chunk: chunk, body, reply: reply)
        }
    }

    func changeURL(_ id: DownloadID, to url: URL) -> Result<Void, DownloadManagerError> { core.changeURL(id, to: url) }
    func replaceFailure(of id: DownloadID, with error: DownloadError) -> Result<Void, DownloadManagerError> { core.replaceFailure(of: id, with: error) }

    func snapshot(of id: DownloadID) -> Download? { core.records[id]?.snapshot() }

    /// Every download, in enqueue order.
    func snapshots(reply: CommandReply<[Download]>) {
        // Each row becomes its (smaller) value as it is read: a large queue is in memory once.
        answer(\.snapshots, reading: { store in
            var downloads: [Download] = []
            try store.forEachRecord { downloads.append($0.snapshot()) }
            return downloads
        }, then: { $0.current($1) }, reply: reply)
    }

    /// The downloads of each URL, in enqueue order.
    /// The rows read are kept for the command that follows (`PersistenceGateway.keepListed`).
    func downloads(of urls: [URL], reply: CommandReply<[[Download]]>) {
        guard core.persistence.persistent else { return answer(reply, .success(core.records.downloads(of: urls))) }
        let handedBefore = core.persistence.writesHanded + 1   // the read below is handed as a job
        core.persistence.read({ try $0.records(of: urls) }, failing: "read the queue", reply: reply) { core, rows in
            core.persistence.keepListed(rows, handedBefore: handedBefore, now: core.configuration.clock.now)
            reply(core, .success(core.records.current(rows)))
        }
    }

    func counts(reply: CommandReply<[DownloadStatus: Int]>) {
        answer(\.counts, reading: { try $0.counts() }, then: { $1 }, reply: reply)
    }

    /// Answers from the records in memory without a store; with one, from rows the disk worker
    /// reads, shaped here with the busy records as they are in memory.
    private func answer<Read: Sendable, T: Sendable>(_ inMemory: (RecordTable) -> T, reading read: @escaping @Sendable (any QueueStore) throws -> Read,
                                                     then shape: @escaping @Sendable (RecordTable, Read) -> T, reply: CommandReply<T>) {
        guard core.persistence.persistent else { return answer(reply, .success(inMemory(core.records))) }
        core.persistence.read(read, failing: "read the queue", reply: reply) { core, value in reply(core, .success(shape(core.records, value))) }
    }

    func submitFetch(_ job: FetchJob) {
        guard !core.stopping else { return job.complete(.cancelled) }
        if core.fetches.submit(job, now: core.configuration.clock.now) { core.scheduler.needsScheduling = true }
    }

    func cancelFetch(token: Int) {
        if core.fetches.cancel(token: token, transfers: core.transfers, multi: core.curl.multi) { core.scheduler.needsScheduling = true }
    }

    /// How many fetches wait for their retry's time, for the tests of fetch retries (that a fetch
    /// waits on the engine's clock cannot be seen from outside otherwise). Nothing else reads it.
    var fetchesWaitingToRetry: Int { core.fetches.waiting.count }

    /// How many curl handles the loop has made rather than reused, for the tests of their reuse
    /// (`EasyHandlePool`). Nothing else reads it.
    var easyHandlesMade: Int { core.transfers.easyHandles.made }

    /// What waits for parts (and so, often, for the disk worker), for the tests of small bodies
    /// and of a stalled worker: what the loop holds back cannot be seen from outside otherwise.
    /// Nothing else reads it.
    var waitingForParts: WaitingForParts {
        WaitingForParts(slotsTaken: core.scheduler.runningDownloads,
                        bodiesHeldBack: core.transfers.byHandle.values.count { $0.state.phase.partWait?.held != nil },
                        attemptsEndedBeforeTheirParts: core.transfers.preparing.values.count { $0.state.phase.partWait?.ended != nil },
                        transfersHeldInCurl: core.transfers.byHandle.values.count { $0.state.paused.contains(.preparing) })
    }

    /// The disks' measurements: how many are under way, and when the newest landed (by the
    /// engine's clock), for the tests that move the clock to see a download wait for room.
    /// Nothing else reads it.
    var diskMeasurements: (underWay: Int, latest: Date?) {
        let volumes = core.space.volumes.values
        return (volumes.count { $0.measuring }, volumes.map(\.measuredAt).max())
    }

    /// The state of `id`'s record held in memory (nil: none is), for the tests of what is asked
    /// while its file is placed. Nothing else reads it.
    func state(of id: DownloadID) -> DownloadRecord.StateMachine? {
        core.records.hot[id]?.state
    }

    struct WaitingForParts: Sendable, Equatable {
        /// Downloads starting or running: the slots taken.
        var slotsTaken: Int
        /// Small bodies kept in memory whose parts are not asked for yet (`Transfer.decideBody`).
        var bodiesHeldBack: Int
        /// Attempts whose bodies came whole while their parts were prepared (they hold no slot).
        var attemptsEndedBeforeTheirParts: Int
        /// Transfers whose bodies wait in curl, paused, for their parts (they hold their slots).
        var transfersHeldInCurl: Int
    }

    /// Applies commands other processes posted, up to number `seq` (see `CommandWatcher`), in the
    /// order posted, a chunk at a time (`PersistenceGateway.nextCommands`).
    func apply(_ commands: [DownloadCommand], through seq: Int) {
        if core.persistence.queueCommands(commands, through: seq) { applyNextCommands() }
    }

    private func applyNextCommands() {
        guard let (head, ids) = core.persistence.nextCommands() else { return }
        withRows(ids, skippingUnreadable: true, ifClosed: {}) { loop, read in
            // Kept for persistenceError and tried again in a second: the watcher has moved past these.
            guard case .success = read else { return loop.core.inbox.resume(after: 1) { EngineLoop($0).applyNextCommands() } }
            for command in head { command.apply(to: loop) }
            loop.core.persistence.applied(head.count)
            loop.applyNextCommands()
        }
    }

    /// Hands one download's machine an event as the loop would, for the tests of a refusal (a
    /// fault of the driver cannot be caused from outside otherwise). Nothing else calls it.
    func handle(_ id: DownloadID, _ event: DownloadRecord.StateMachine.Event) -> DownloadRecord.StateMachine.Action? {
        core.handle(id, event)
    }
}

extension EngineCore {
    /// The transfer thread's body: runs until shutdown, then releases every curl handle here.
    func run() {
        while !stopping {
            perform(inbox.takeJobs())
            if stopping { break }
            // Until there is a multi handle (an engine whose queue is in memory loads curl only once a download is in line or
            // a fetch waits), the jobs, the disk worker's work and idle waiters, as no turn runs; turns, which start transfers, wait.
            guard let multi = curl.multi else {
                loadCurlIfWanted(); submitWork(); resumeIdleWaitersIfIdle(); inbox.waitForJobs(); continue
            }
            multi.poll(milliseconds: turn())
        }
        tearDown()
    }

    /// Runs jobs from the inbox, each handed the loop's face (never the core itself).
    func perform(_ jobs: [EngineInbox.Job]) {
        for job in jobs { job(EngineLoop(self)) }
    }
}

extension EngineInbox {
    /// Posts the rest of one of the core's own operations (an answer from the disk worker that it
    /// waited for), to run on the transfer thread; false once the engine has shut down. Only the
    /// core's files use it: the continuation was written there.
    @discardableResult
    func resume(_ body: @escaping @Sendable (EngineCore) -> Void) -> Bool {
        post { body($0.core) }
    }

    /// `resume`, `seconds` from now.
    func resume(after seconds: Double, _ body: @escaping @Sendable (EngineCore) -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { self.resume(body) }
    }
}
