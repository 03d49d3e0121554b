import CCurl
import FoundationEssentials

/// What happens when a download attempt ends.
extension EngineCore {
    func finish(_ transfer: Transfer, code: CURLcode) {
        multi.remove(transfer.easy)
        switch transfer.purpose {
        case .fetch(let job):
            fetches.finished(transfer, job: job, code: code, configuration: configuration)
            scheduler.needsScheduling = true
        case .download(let id) where transfers.runs(transfer):
            releaseSlot(id)
            finishDownload(id, transfer, code: code)
        case .download:
            break   // stopped by a pause or a removal: no longer the record's
        }
    }

    /// Performs what the ended attempt comes to (`Transfer.conclude`), and reports it.
    func finishDownload(_ id: DownloadID, _ transfer: Transfer, code: CURLcode) {
        let host = records[id]?.host ?? ""
        // A body-less 2xx whose part is being prepared is reported once the part is ready.
        defer {
            if hub.wants(.attempt), transfer.state.phase.partWait == nil {
                let error = records[id].flatMap { $0.status != .completed && !$0.placing ? $0.lastError : nil }
                emit(.attempt(transfer.report(id, host: host, error: error)))
            }
        }
        if code == CURLE_OK, transfer.head.isSuccess, case .awaitingHead = transfer.state.phase {
            decideBody(transfer)   // a 2xx without a body still makes a (empty) file
        }
        let (stall, now) = (configuration.stall, configuration.clock.now)
        let ending = records.update(id) {
            transfer.conclude(code, &$0, table: transfers, placements: &placements, placer: placer, stall: stall, now: now)
        }
        switch ending {
        case nil: transfer.closePart(on: placer)
        case .awaitPart(let asking)?: if let asking { askForPart(asking) }
        case .outcome(.complete)?: move(id, .complete)
        case .outcome(.place)?, .outcome(.placeWholePart)?: place(id, transfer)
        case .outcome(.continueRange)?: move(id, .requeue)
        case .outcome(.restartFresh(let reason))?: restartFresh(id, reason: reason)
        case .outcome(.fail(let error))?: fail(id, error)
        case .outcome(.retry(let failure, let holdHost))?:
            // A 429 or 503 may speak for its host: the one that answered (after the redirects).
            let answered = holdHost ? transfers.countAnsweringHost(of: transfer, scheduler: &scheduler, records: &records) : nil
            retryOrFail(id, failure, hostStatus: holdHost ? transfer.head.status : nil, answered: answered)
        case .outcome(.holdForSpace(let error))?: holdForSpace(id, error, volume: transfer.limits.volume?.id, needed: transfer.spaceNeeded)
        }
    }

    /// Goes again at once from the first byte, counting no failure; a resource that keeps changing fails after a few.
    private func restartFresh(_ id: DownloadID, reason: String) {
        guard let record = records.restartPart(id, epoch: transfers.nextPartEpoch()) else { return }
        // Deleted by the disk worker before it looks at the part for the next attempt.
        if let path = record.filePath { persistence.hand(.removeFiles([PartFile.path(for: path)], root: record.request.root, afterCommit: false)) }
        guard case .none? = handle(id, .restarted), let restarts = records[id]?.state.restarts else { return }
        guard let failure = DownloadLifecycle.restart(reason: reason, restarts: restarts, limit: configuration.maxRestarts) else { return move(id, .requeue) }
        retryOrFail(id, failure)
    }

    /// Waits to retry or fails, as the retry policy says. `hostStatus`: a 429 or 503 that may hold
    /// the download's hosts; `answered`: the host that answered it, when known.
    func retryOrFail(_ id: DownloadID, _ failure: RetryPolicy.Failure, hostStatus: Int? = nil, answered: (id: Int, key: String)? = nil) {
        let now = configuration.clock.now
        switch records.retryOrFail(id, failure, policy: configuration.retry, now: now, random: Double.random(in: 0..<1)) {
        case .success(let at)?:
            if let status = hostStatus, let host = records[id]?.host, let hold = scheduler.holdHosts(
                status: status, of: id, host: host, answered: answered, retryAt: at, namesWindow: failure.retryAfter != nil, now: now) {
                records.update(id) { $0.lastError?.message += "; " + hold }
            }
            move(id, .retryLater)
        case .failure(let error)?: fail(id, error)
        case nil: break
        }
    }

    func fail(_ id: DownloadID, _ error: DownloadError) {
        placements.abandon(id)
        records.update(id) { $0.lastError = error }
        move(id, .fail)
    }

    /// Places the finished file off this thread, so a slow disk never stalls other transfers: a
    /// part in this turn's batch, a whole body by the disk worker (`WholeFile`).
    private func place(_ id: DownloadID, _ transfer: Transfer) {
        let whole = transfer.state.phase.wholeBody
        guard whole != nil || (records[id]?.filePath != nil && (transfer.part.fd >= 0 || transfer.head.status == 416)) else {
            return fail(id, DownloadError(.fileSystem, "the finished download has no file"))
        }
        guard case .none? = handle(id, .placeStarted) else { return transfer.closePart(on: placer) }   // refused: failed
        let size = transfer.progress.fileSize
        guard let record = records.update(id, { record in
            (record.bytes, record.total) = (size, size)
            return record
        }) else { return }
        guard let whole else { return placements.place(record, transfer) }
        guard let file = placements.whole(transfer, whole, completing: persistence.persistent ? record : nil) else { return }
        if file.completedRow != nil { records.saving(id) }
        persistence.hand(.writeWhole(file))
    }

    /// The turn's finished files, placed together (group commit).
    func placePending() {
        if let batch = placements.take() { placer.place(batch) }
    }

    /// - Parameters:
    ///   - saved: the row is saved as completed already (`WholeFile`).
    ///   - transient: a failure is the database's, not the file's: the download is tried again.
    func placementFinished(_ id: DownloadID, _ result: Result<Void, DownloadError>, saved: Bool = false, transient: Bool = false) {
        guard case .landed(let pending)? = handle(id, .placeLanded), let record = records[id] else { return }
        switch result {
        case .success:
            placements.landed(id)
            records.update(id) { $0.lastError = nil }
            if let path = record.filePath { persistence.releasePath(path, of: id) }
            // The validators stay: they say which version of the resource the file is.
            move(id, .complete, saving: !saved)
        case .failure(let error) where error.code == .notEnoughDiskSpace:
            // Filled while flushed or renamed: the whole part stays, and waits for room (then one request past its end).
            let folder = record.request.destination.folder
            holdForSpace(id, error, volume: space.volumes.values.first { $0.folder == folder }?.id, needed: SpacePolicy.unknownSizeNeed)
        case .failure(let error) where transient:
            retryOrFail(id, RetryPolicy.Failure(error: error, isTransient: true, retryAfter: nil, madeProgress: false))
        case .failure(let error):
            fail(id, error)
        }
        switch pending {
        case .removal(let deleteFile)?:
            if let record = records[id] { forget(record, deleteFiles: deleteFile) }
        case .replacement(let replacement)?:
            if let record = records[id] { forget(record, deleteFiles: false) }
            enqueue([replacement], replacing: true, reply: .ignored)
        case nil:
            break
        }
    }
}
