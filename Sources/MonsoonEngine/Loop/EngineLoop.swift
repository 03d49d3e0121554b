import Foundation

/// The transfer thread as the engine's other threads see it: what they may ask of it
/// (`DownloadManager`'s commands, other processes' commands) and what they may tell it
/// (`Message`: the disk worker's and the placer's answers). Nothing more.
///
/// Each job posted to the `EngineInbox` is handed one of these, on the transfer thread. Its one
/// stored property, the `EngineCore` that holds every record and transfer, is private to this
/// file: a job can ask or tell, but never reach into the loop's fields.
struct EngineLoop {
    fileprivate let core: EngineCore

    fileprivate init(_ core: EngineCore) {
        self.core = core
    }

    // MARK: - Lifetime

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

    /// Takes in one of the other threads' answers.
    func receive(_ message: Message) {
        core.receive(message)
    }

    // MARK: - Answering commands

    /// Runs `body` with the records of `ids` at hand (read by the disk worker when not in memory).
    func withRows(_ ids: [DownloadID], ifClosed: @escaping @Sendable () -> Void,
                  _ body: @escaping @Sendable (EngineLoop, Result<Void, DownloadManagerError>) -> Void) {
        core.withRows(ids, ifClosed: ifClosed) { core, read in body(EngineLoop(core), read) }
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

    // MARK: - Commands (see `DownloadManager`)

    func enqueue(_ requests: [DownloadRequest], replacing: Bool, reply: CommandReply<[DownloadID]>) {
        core.enqueue(requests, replacing: replacing, reply: reply)
    }

    func pause(_ id: DownloadID) -> Result<Void, DownloadManagerError> { core.perform(.pause, on: id) }
    func resume(_ id: DownloadID) -> Result<Void, DownloadManagerError> { core.perform(.resume, on: id) }
    func retry(_ id: DownloadID, reply: CommandReply<Void>) { core.retry(id, reply: reply) }
    func remove(_ id: DownloadID, deleteFile: Bool) -> Result<Void, DownloadManagerError> { core.remove(id, deleteFile: deleteFile) }
    func claim(_ ids: [DownloadID], by claimant: Int32 = EngineCore.ownClaim) -> Result<Void, DownloadManagerError> { core.claim(ids, by: claimant) }
    func release(_ id: DownloadID, by claimant: Int32) { core.release(id, by: claimant) }
    func adoptNewRows(replying replies: [CommandReply<Void>]) { core.adoptNewRows(replying: replies) }
    func pauseAll(reply: CommandReply<Void>) { core.pauseAll(reply: reply) }
    func resumeAll(reply: CommandReply<Void>) { core.resumeAll(reply: reply) }
    func setPriority(_ priority: Int, for id: DownloadID) -> Result<Void, DownloadManagerError> { core.setPriority(priority, for: id) }
    func setLimits(maxConcurrent: Int?, perHost: Int??) { core.setLimits(maxConcurrent: maxConcurrent, perHost: perHost) }
    func changeURL(_ id: DownloadID, to url: URL) -> Result<Void, DownloadManagerError> { core.changeURL(id, to: url) }
    func replaceFailure(of id: DownloadID, with error: DownloadError) -> Result<Void, DownloadManagerError> { core.replaceFailure(of: id, with: error) }

    func snapshots(reply: CommandReply<[Download]>) { core.snapshots(reply: reply) }
    func snapshot(of id: DownloadID) -> Download? { core.records[id]?.snapshot() }
    func downloads(of urls: [URL], reply: CommandReply<[[Download]]>) { core.downloads(of: urls, reply: reply) }
    func counts(reply: CommandReply<[DownloadStatus: Int]>) { core.counts(reply: reply) }

    func submitFetch(_ job: FetchJob) { core.submitFetch(job) }
    func cancelFetch(token: Int) { core.cancelFetch(token: token) }

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

    /// Applies commands other processes posted, up to number `seq` (see `CommandWatcher`).
    func apply(_ commands: [DownloadCommand], through seq: Int) { core.apply(commands, through: seq) }

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
