import CCrypto
import CCurl
import FoundationEssentials

/// Starting, deciding and finishing download transfers.
extension EngineCore {
    func schedule(now: Date) {
        scheduler.needsScheduling = false
        guard !stopping else { return }
        let policy = Scheduler(maxConcurrent: configuration.maxConcurrentDownloads, maxPerHost: configuration.maxDownloadsPerHost)
        // Whole files handed to the worker hold no slot: `space.earlyBudget` bounds them, and once a
        // slow worker has it all, the next bodies wait in curl, holding their slots. Nothing starts
        // before the queue is restored; fetches do.
        for entry in persistence.restoring ? [] : scheduler.select(policy, endedAwaitingParts: transfers.endedAwaitingParts, now: now) {
            scheduler.take(entry)   // the slot, while the disk worker looks at the part (and reads the row)
            let record = records.hot[entry.id]   // one copy, for the looks below
            if let record, let ready = space.plannedStart(of: record, awaitingPart: persistence.awaitsPart(entry.id), now: now) {
                startPrepared(entry.id, .ready(ready))
            } else {
                persistence.hand(.prepareStart(StartPreparation(id: entry.id, record: record)))
            }
        }
        scheduler.prefetchStarts(window: DownloadScheduler.readAheadWindow(concurrency: configuration.maxConcurrentDownloads), records: &records, persistence: &persistence)
        fetches.start(configuration: configuration, transfers: transfers, multi: multi)
    }

    /// Starts the attempt planned, unless the download was paused, removed or released meanwhile.
    func startPrepared(_ id: DownloadID, _ outcome: StartPreparation.Outcome) {
        guard let entry = scheduler.starting[id] else { return }   // removed meanwhile
        guard case .ready(let ready) = outcome else {
            guard case .failed(let box) = outcome else { return scheduler.releaseStartingSlot(id) }
            persistence.failed(box.error)
            // A download paused meanwhile is found so when its row is read.
            return scheduler.startFailed(id, requeue: records.hot[id].map { $0.status == .queued } ?? true, now: configuration.clock.now)
        }
        var record = records.hot[id] ?? ready.record
        guard record.status == .queued, scheduler.runs(id), !stopping else { return scheduler.releaseStartingSlot(id) }
        scheduler.queue.remove(key: record.queueKey)   // when paused and resumed meanwhile
        transfers.resume(&record, as: ready)
        records[id] = record
        // What the server said the file is (an earlier attempt's), else what the caller expects.
        let known = record.resume?.total ?? record.total
        let expected = known ?? record.request.expectedSize
        let refusal = DownloadRequest.refusal(of: record.request.url).map { DownloadError(.unsupportedScheme, $0) }
        guard refusal == nil, let volume = roomToStart(id, record, ready, known: known, expected: expected) else {
            if let refusal { scheduler.releaseStartingSlot(id); fail(id, refusal) }
            return
        }
        guard let transfer = transfers.startDownload(record, plan: ready.plan, expected: expected, volume: volume, hosts: entry.hosts.each,
                                                     configuration: configuration, runningDownloads: scheduler.runningDownloads,
                                                     budget: space.earlyBudget, multi: multi) else {
            scheduler.releaseStartingSlot(id)
            return fail(id, DownloadError(.network, "libcurl refused to start the transfer"))
        }
        transfer.engine = self
        scheduler.started(id)
        records.started(id)
        // Saved with the first body byte (name and status in one commit): a run killed before leaves it queued, as it is.
        move(id, .start, saving: false)
    }

    /// Removes a running transfer, keeping its part file for a later resume.
    /// - Returns: false when asked inside one of curl's callbacks: it stops once curl has returned.
    @discardableResult
    func stopTransfer(_ id: DownloadID) -> Bool {
        guard case .done(let transfer, let freed) = transfers.stop(id, multi: curl.multi) else { return false }
        if freed { scheduler.needsScheduling = true }
        guard let transfer else { return true }
        releaseSlot(id)
        placements.recordAttempt(id, transfer, keepsBody: true)
        transfer.closePart(on: placer)
        if case .writing = transfer.state.phase { records.update(id) { $0.bytes = transfer.progress.fileSize } }
        return true
    }

    /// Runs what had to wait for curl to return (`stopTransfer` from inside a callback).
    func runAfterCurl() {
        for action in transfers.takeAfterCurl() {
            switch action {
            case .stop(let id, let transfer): if transfers.running[id] === transfer { stopTransfer(id) }
            case .failRefused(let id, let error): failRefused(id, error)
            }
        }
    }

    func releaseSlot(_ id: DownloadID) {
        guard let ended = transfers.endRunning(id) else { return }
        scheduler.releaseSlot(countedOn: ended.countedHosts)
        // What it still expected to write is no longer spoken for: a held download may fit now.
        if ended.limits.volume != nil { releaseSpaceHolds() }
        // Told last: a refusal stops the transfer, which then finds no slot to release again (no loop).
        _ = handle(id, .attemptEnded)
    }

    /// Decides where the body goes (`Transfer.decideBody`), once the status and headers are known.
    func decideBody(_ transfer: Transfer) {
        // Before the record is taken: it would be written back without the host this sets.
        if transfer.downloadID != nil { transfers.countAnsweringHost(of: transfer, scheduler: &scheduler, records: &records) }
        let (now, reserve) = (configuration.clock.now, configuration.diskReserve)
        guard let id = transfer.downloadID, let step = records.update(id, {
            transfer.decideBody(&$0, table: transfers, space: space, diskReserve: reserve, now: now)
        }) else {
            transfer.handle(.abort(.stopped))
            return
        }
        guard case .prepare(let preparation, let asking) = step else { return }
        // Ended already (a body-less 2xx), it ends once the part is ready. Still running, it is in
        // curl's write callback, where a refusal (reported) cuts it short, and nothing is prepared.
        if transfers.runs(transfer), case .refuse? = handle(id, .bodyPreparing) {
            // Its reset was to be flushed with the part's row, which will not be written now.
            if preparation.durably { records.update(id) { $0.checkpointResetPending = true } }
            return
        }
        if asking { askForPart(preparation) }
    }

    /// The disk worker's answer for a part: write into it (letting curl go on), or fail the attempt.
    func bodyPrepared(_ preparation: BodyPreparation, _ outcome: BodyPreparation.Outcome) {
        let id = preparation.row.request.id
        if persistence.persistent { records.saved([id]) }
        persistence.partAnswered(id)
        let transfer = transfers.takePreparing(id, attempt: preparation.attempt)
        if let transfer {
            // An ended attempt no longer waits for its part: a start it held back may go now.
            if transfer.state.phase.partWait?.ended != nil { scheduler.needsScheduling = true }
            handle(id, .bodyReady)
        }
        persistence.named(preparation.row.sequence, of: id, outcome, stopped: transfer == nil, records: &records)
        guard let transfer else {
            if case .ready(let fd, _) = outcome { placer.closePart(fd) }
            return
        }
        let action = transfer.partAnswered(outcome, placer: placer)
        if case .ignored = action { return }
        // Its row may not have been saved: a reset checkpoint is flushed again next time.
        if case .failed = outcome { records.update(id) { $0.checkpointResetPending = true } }
        // A body-less response (or one cut short meanwhile): its part is answered, so it ends now.
        if case .finish(let code) = action { finishDownload(id, transfer, code: code) }
    }
}
