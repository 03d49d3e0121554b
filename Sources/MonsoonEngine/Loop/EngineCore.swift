import FoundationEssentials
import Glibc

/// The engine's state on the transfer thread, and what changes it: the multi handle, the
/// running transfers, and the download records with their scheduling state.
///
/// Only the transfer thread touches it, and nothing outside the loop's own files ever holds
/// it: other threads reach it through `EngineLoop` (commands and messages, posted to the
/// `EngineInbox`), whose only stored property is this core, kept private. Because one thread
/// owns all of it, no lock guards the records and no callback races a state change. It only
/// transfers: what may block on a disk or the database (rows, names, part files, free space,
/// flushes, restoring the queue) is handed to the `DiskWorker` and the `Placer`, whose answers
/// come back as messages (`EngineLoop.Message`); what to do is decided by pure values
/// (`Scheduler`, `BodyDecision`, `DownloadLifecycle`, `RetryPolicy`, and each download's
/// `DownloadRecord.StateMachine`) that this class performs.
final class EngineCore {
    var configuration: EngineConfiguration
    private(set) var curl: CurlLoading
    let inbox: EngineInbox
    let hub: EventHub
    let placer: Placer
    var records: RecordTable
    var scheduler: DownloadScheduler
    let transfers: TransferTable
    let space: SpaceGovernor
    var placements: Placements
    var events = EventOutbox()
    var fetches = FetchLine()
    var stopping = false
    var persistence: PersistenceGateway
    /// The claimant standing for this process (its own enqueues and `claim` calls).
    static let ownClaim: Int32 = 0

    /// - Parameter workerStore: the disk worker's connection to the queue's database, nil for a
    ///   queue in memory. The loop never reads the database itself: the worker restores the queue.
    init(configuration: EngineConfiguration, inbox: EngineInbox, hub: EventHub, workerStore: (any QueueStore)?) {
        self.configuration = configuration.asTaken
        self.inbox = inbox
        self.hub = hub
        transfers = TransferTable(maxConcurrentDownloads: self.configuration.maxConcurrentDownloads,
                                  maxBytesPerSecond: configuration.maxBytesPerSecond)
        persistence = PersistenceGateway(store: workerStore, inbox: inbox, hub: hub, checkpoint: self.configuration.checkpoint)
        placer = Placer(inbox: inbox, warc: configuration.warc)
        placements = Placements(archive: configuration.warc)
        space = SpaceGovernor(inbox: inbox, reserve: configuration.diskReserve)
        records = RecordTable(persistent: workerStore != nil)
        scheduler = DownloadScheduler(claimedOnly: configuration.scope == .claimedOnly)
        // The disk worker restores the queue, and the loop takes its first commands, while curl loads.
        if workerStore != nil { persistence.startRestore() }
        curl = CurlLoading(now: workerStore != nil) { [inbox] in inbox.resume { if !$0.stopping { _ = $0.multi } } }   // the handle made here once curl is there
    }

    /// The multi handle; the first use waits for curl to load, which no turn before it needs.
    var multi: MultiHandle { curl.multi ?? curl.handle(attachingTo: inbox) }
    func loadCurlIfWanted() { if !scheduler.queue.isEmpty || fetches.hasWork { curl.start() } }

    /// One turn of the loop, between the inbox's jobs and the next poll (`run`, in EngineLoop.swift).
    /// - Returns: how long the poll may wait, in milliseconds.
    func turn() -> Int32 {
        // Asked for while curl ran between turns: it calls back from inside `curl_easy_pause`
        // too, when a transfer is let go (no refusal can come from there today).
        runAfterCurl()
        let now = configuration.clock.now
        for id in scheduler.takeDue(now: now) { move(id, .requeue) }   // which clears its retry time
        if fetches.promoteDue(now: now) { scheduler.needsScheduling = true }
        if scheduler.needsScheduling { schedule(now: now) }
        multi.perform()
        transfers.pace()
        transfers.startDueWriteback(placer)
        space.check(now: now, running: transfers.running.values)
        // Before curl's messages: a transfer stopped now leaves none to finish it a second time.
        runAfterCurl()
        while let (easy, code) = multi.nextDone() {
            if let transfer = transfers.removeHandle(easy) { finish(transfer, code: code) }
        }
        placePending()
        if scheduler.needsScheduling { schedule(now: configuration.clock.now) }
        publishProgress(now: configuration.clock.now, force: false)
        resumeIdleWaitersIfIdle()
        submitWork()
        return pollTimeout(now: configuration.clock.now)
    }

    /// Until the next retry, host hold, progress report, disk measurement or refill of the rate
    /// limit; curl shortens it for its own timers, and a posted job or socket activity ends it.
    private func pollTimeout(now: Date) -> Int32 {
        if scheduler.needsScheduling { return 0 }
        var deadline = now.addingTimeInterval(30)
        if !transfers.byHandle.isEmpty { deadline = min(deadline, events.nextProgress) }
        if let due = scheduler.nextDeadline { deadline = min(deadline, due) }
        if let due = fetches.nextDue { deadline = min(deadline, due) }
        if let due = space.nextCheck { deadline = min(deadline, due) }
        if let wake = transfers.rateWake(now: now) { deadline = min(deadline, wake) }
        let milliseconds = deadline.timeIntervalSince(now) * 1000
        return Int32(max(0, min(30_000, milliseconds.rounded(.up))))
    }

    func emit(_ event: DownloadEvent) {
        guard hub.wants(event.kind) else { return }
        events.append(event)
    }

    /// Reports progress at most every `EventOutbox.progressInterval`.
    func publishProgress(now: Date, force: Bool) {
        guard events.progressDue(now: now, force: force) else { return }
        for transfer in transfers.byHandle.values {
            // A small body held in memory for a second: its part now, so a kill loses no more.
            if let held = transfer.heldPartDue(now: now) { askForPart(held) }
            let progress = transfer.progress
            guard let id = transfer.downloadID, transfer.state.body != .none, progress.fileSize != progress.reported else { continue }
            transfer.progress.reported = progress.fileSize
            records.update(id) { $0.bytes = progress.fileSize }
            emit(.progress(id: id, bytes: progress.fileSize, total: progress.total))
            if transfer.state.body == .written, persistence.persistent, let record = records.hot[id] { persistence.saveProgress(of: record, transfer, now: now, placer: placer) }
        }
    }

    /// Moves a download as the lifecycle says `event` does, in every part, and reports it.
    /// - Parameter saving: write the row now (false: a later save carries it, as the first body byte's does).
    func move(_ id: DownloadID, _ event: DownloadLifecycle.Event, saving: Bool = true) {
        let change: StatusChange
        switch records.move(id, event) {
        case .success(let moved)?: change = moved
        case .failure(let refusal)?: return refused(id, refusal.action)
        case nil: return
        }
        let held = event == .holdForSpace
        // Anything else that happens to a download waiting for room ends the wait.
        if !held && !space.holds.isEmpty { space.holds[id] = nil }
        scheduler.moved(id, change, held: held)
        if saving { persist(id) }
        // A hold says why even when the download was queued already (it never started).
        if change.old != change.new || held { emitStatus(id) }
    }

    func emitStatus(_ id: DownloadID) {
        if hub.wants(.statusChanged), let snapshot = records.update(id, { $0.snapshot() }) { emit(.statusChanged(snapshot)) }
    }

    /// Hands `event` to the download's state machine; a refusal is reported (`refused`).
    /// - Returns: the machine's answer; nil when there is no such download.
    @discardableResult
    func handle(_ id: DownloadID, _ event: DownloadRecord.StateMachine.Event) -> DownloadRecord.StateMachine.Action? {
        guard let action = records.update(id, { $0.handle(event) }) else { return nil }
        if case .refuse = action { refused(id, action) }
        return action
    }

    /// The download's machine refused an event the loop asked of it: a fault in the loop. It is
    /// never ignored, in any build: written to standard error, kept for `persistenceError`, and
    /// the download fails (its transfer stopped) rather than go on in a state it cannot be in.
    func refused(_ id: DownloadID, _ action: DownloadRecord.StateMachine.Action) {
        guard case .refuse(let reason) = action else { return }
        let error = DownloadError(.engineFault, "internal error: \(reason) (download \(id))")
        StandardError.write("monsoon: \(error.message)\n")   // rare: no hot path
        persistence.failed(error)
        // From inside one of curl's callbacks, the transfer stops once curl has returned, and
        // the download fails after it.
        if stopTransfer(id) { failRefused(id, error) } else { transfers.afterCurl(.failRefused(id, error)) }
    }

    /// Fails it where failing can happen (never refused again): a file being placed lands first, a completed download keeps its file.
    func failRefused(_ id: DownloadID, _ error: DownloadError) {
        guard let record = records[id], record.state.phase == .idle,
              DownloadLifecycle.status(after: .fail, from: record.status) != nil else { return }
        records.update(id) { $0.lastError = error }
        move(id, .fail)
    }

    var isIdle: Bool {
        !persistence.restoring && scheduler.queue.isEmpty && scheduler.waiting.isEmpty && scheduler.runningDownloads == 0 && scheduler.starting.isEmpty && !records.hot.values.contains { $0.placing || $0.status == .downloading }
    }

    /// Answers the idle waiters once the rows and events of the idle queue are out.
    func resumeIdleWaitersIfIdle() {
        guard !events.idleWaiters.isEmpty, isIdle || stopping else { return }
        submitWork()
        answerIdleWaiters()
    }

    private func answerIdleWaiters() { afterSaving { [waiters = events.takeIdleWaiters()] _ in for waiter in waiters { waiter.resume() } } }

    func tearDown() {
        runAfterCurl()   // nothing is left to wait for curl: it is not running now
        persistence.stopRestore()
        curl.join()   // a stop before curl loaded: no transfer ran, and no handle is made now
        for id in transfers.shutDown(multi: curl.multi, records: &records, placements: &placements, placer: placer, inbox: inbox) {
            // Back in line for the next run (not in this one's queue: it is ending).
            handle(id, .attemptEnded)
            if records[id]?.status == .downloading { handle(id, .lifecycle(.requeue)) }
            persist(id)
        }
        placements.abandonAll { records[$0]?.placing == true }
        placePending()
        fetches.cancelAll()
        // Let files being placed land and parts flush, and their results arrive, before the inbox closes.
        placer.waitUntilDone()
        space.waitUntilDone()
        // Let the rows so far be saved and the parts being prepared open, and their answers arrive.
        submitWork()
        persistence.waitUntilDone()
        // Jobs posted until now still get their answer (commands report `.shutDown`).
        perform(inbox.close())
        curl.multi?.cleanup()
        answerIdleWaiters()
        submitWork()
        persistence.waitUntilDone()
        placer.waitUntilDone()   // parts that came back ready after the stop were closed just now
        hub.finishAll()
    }
}
