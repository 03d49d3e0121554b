import CCurl
import Foundation

/// What happens when a download attempt ends.
extension EngineCore {
    func finish(_ transfer: Transfer, code: CURLcode) {
        multi.remove(transfer.easy)
        switch transfer.purpose {
        case .fetch(let job):
            fetches.finished(transfer, job: job, code: code, configuration: configuration)
            scheduler.needsScheduling = true
        case .download(let id):
            // A transfer stopped by pause or remove is no longer the record's: ignore it.
            guard transfers.running[id] === transfer else { return }
            releaseSlot(id)
            let host = records[id]?.host ?? ""
            finishDownload(id, transfer, code: code)
            // A body-less 2xx whose part is being prepared ends, and is reported, once it is ready.
            if case .preparingPart = transfer.state.phase { return }
            report(id, host: host, transfer, code: code)
        }
    }

    /// What the attempt came to, for run reports (only built when someone listens).
    func report(_ id: DownloadID, host: String, _ transfer: Transfer, code: CURLcode) {
        guard hub.wants(.attempt) else { return }
        var error: DownloadError?
        if let record = records[id], record.status != .completed && !record.placing { error = record.lastError }
        emit(.attempt(transfer.report(id, host: host, error: error)))
    }

    func finishDownload(_ id: DownloadID, _ transfer: Transfer, code: CURLcode) {
        if code == CURLE_OK, transfer.head.isSuccess, case .awaitingHead = transfer.state.phase {
            decideBody(transfer)   // a 2xx without a body still makes a (empty) file
        }
        switch transfer.handle(.ended(code, bodyWhole: transfer.cameWhole(code: code))) {
        case .awaitPart(let asking):
            // Ended (a body-less 2xx, or cut short while paused) with its part still being
            // prepared: it ends, and is reported, once the part is ready.
            if let asking { askForPart(asking) }
            return
        default:
            if case .wholeBody = transfer.state.phase { wholeBodyCame(id, transfer) }
        }
        let body = transfer.state.body
        let abort = transfer.state.phase.abort
        var highWater = 0
        var hasFile = false
        var known: ResumeState?
        records.update(id) { record in
            if body != .none { record.bytes = transfer.progress.fileSize }
            highWater = record.highWater
            hasFile = record.filePath != nil
            known = record.resume
        }
        if body != .none { transfer.progress.reported = transfer.progress.fileSize }
        let end = transfer.end(code: code, highWater: highWater, hasFile: hasFile, known: known)
        let outcome = DownloadLifecycle.outcome(of: end, stall: configuration.stall, now: configuration.clock.now)
        switch outcome {
        case .fail, .restartFresh: placements.recordAttempt(id, transfer, keepsBody: false)
        default: placements.recordAttempt(id, transfer, keepsBody: true)
        }
        if abort?.restartReason == nil && abort?.error == nil {
            // Progress is net: only bytes past the most the part has ever held count.
            records.update(id) { $0.highWater = max(highWater, transfer.progress.fileSize) }
        }
        switch outcome {
        case .complete, .place, .placeWholePart: break
        default: transfer.closePart(on: placer)
        }
        switch outcome {
        case .complete:
            // Nothing to place: the count (and the hash) is the result.
            let checksum = transfer.progress.digest.map(FileDigest.hex(finishing:))
            records.update(id) { record in
                record.bytes = transfer.progress.fileSize
                record.total = transfer.progress.fileSize
                record.checksum = checksum
                record.lastError = nil
            }
            move(id, .complete)
        case .place:
            place(id, transfer)
        case .placeWholePart(let total):
            // The part is placed as it is (the placer opens it).
            transfer.progress.fileSize = total
            transfer.progress.total = total
            records.update(id) { record in
                record.total = total
                record.bytes = total
            }
            place(id, transfer)
        case .continueRange:
            move(id, .requeue)
        case .restartFresh(let reason):
            restartFresh(id, reason: reason)
        case .fail(let error):
            fail(id, error)
        case .retry(let failure, let holdHost):
            // A 429 or 503 may speak for its host: the one that answered (after the redirects).
            let answered = holdHost ? countAnsweringHost(transfer) : nil
            retryOrFail(id, failure, hostStatus: holdHost ? transfer.head.status : nil, answered: answered)
        case .holdForSpace(let error):
            let needed = SpacePolicy.need(expected: transfer.progress.total ?? transfer.progress.expected, have: transfer.progress.fileSize)
            holdForSpace(id, error, volume: transfer.limits.volume?.id, needed: max(needed, transfer.state.spaceWanted))
        }
    }

    /// Discards the part and goes again at once, without Range and without
    /// counting a failure; a resource that keeps changing fails after a few.
    private func restartFresh(_ id: DownloadID, reason: String) {
        guard var record = records[id] else { return }
        // Deleted by the disk worker before it looks at the part for the next attempt.
        if let path = record.filePath { persistence.hand(.removeFiles([PartFile.path(for: path)], root: record.request.root, afterCommit: false)) }
        record.resume = nil
        record.bytes = 0
        record.startPartOver(epoch: transfers.nextPartEpoch())
        records[id] = record
        guard case .none? = handle(id, .restarted), let restarts = records[id]?.state.restarts else { return }
        if let failure = DownloadLifecycle.restart(reason: reason, restarts: restarts, limit: configuration.maxRestarts) {
            retryOrFail(id, failure)
            return
        }
        move(id, .requeue)
    }

    /// Asks the retry policy, then waits to retry or fails.
    /// - Parameters:
    ///   - hostStatus: a 429 or 503 that may hold the download's hosts (`HostHolds` decides).
    ///   - answered: the host that answered it (id and name), when known.
    func retryOrFail(_ id: DownloadID, _ failure: RetryPolicy.Failure, hostStatus: Int? = nil, answered: (id: Int, key: String)? = nil) {
        guard var record = records[id] else { return }
        let decision = configuration.retry.decide(failure, counters: record.counters, random: Double.random(in: 0..<1))
        switch decision {
        case .retry(let delay, let counters):
            let now = configuration.clock.now
            let at = now.addingTimeInterval(delay)
            record.counters = counters
            record.lastError = failure.error
            record.retryAt = at
            if let status = hostStatus {
                let pair = HostPair(first: scheduler.hosts.id(record.host), last: answered?.id)
                if let hold = scheduler.record(status: status, download: id, hosts: pair, retryAt: at, namesWindow: failure.retryAfter != nil, now: now) {
                    // The others on that host wait too: said in this one's retrying line.
                    let text = HostHolds.text(host: answered?.key ?? record.host, until: hold.until, reason: hold.reason)
                    record.lastError?.message += "; " + text
                    scheduler.needsScheduling = true
                }
            }
            records[id] = record
            move(id, .retryLater)
        case .fail(let error, let counters):
            record.counters = counters
            records[id] = record
            fail(id, error)
        }
    }

    func fail(_ id: DownloadID, _ error: DownloadError) {
        placements.abandon(id)
        records.update(id) { $0.lastError = error }
        move(id, .fail)
    }

    // MARK: - Placement

    /// Hands the finished part to the placement queue: fsync, rename and folder
    /// fsync happen there, so a slow disk never stalls other transfers.
    private func place(_ id: DownloadID, _ transfer: Transfer) {
        if case .wholeBody(let preparation) = transfer.state.phase { return placeWhole(id, transfer, preparation) }
        guard let path = records[id]?.filePath, transfer.part.fd >= 0 || transfer.head.status == 416 else {
            fail(id, DownloadError(.fileSystem, "the finished download has no file"))
            return
        }
        guard case .none? = handle(id, .placeStarted) else {
            transfer.closePart(on: placer)   // refused, and reported: the download failed
            return
        }
        records.update(id) { record in
            record.bytes = transfer.progress.fileSize
            record.total = transfer.progress.fileSize
        }
        let lastModified = (transfer.head.lastModified ?? records[id]?.resume?.lastModified).flatMap(HTTPDate.parse)
        var placement = Placement(fd: transfer.part.fd, partPath: PartFile.path(for: path), destination: path, lastModified: lastModified,
                                  root: records[id]?.request.root)
        placement.warc = placements.payload(id, url: records[id]?.request.url.absoluteString ?? "", partPath: placement.partPath)
        transfer.part.fd = -1
        placements.append(id, placement)
    }

    /// Hands the files finished in this turn of the loop to the placer (group commit).
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
            if let path = record.filePath { releasePath(path, of: id) }
            // The validators stay: they say which version of the resource the file is.
            move(id, .complete, saving: !saved)
        case .failure(let error) where error.code == .notEnoughDiskSpace:
            // The disk filled while the file was flushed or renamed: its part is whole and stays; it
            // waits for room, and the next attempt finds it whole (one request past its end).
            let folder = record.request.destination.folder
            holdForSpace(id, error, volume: space.volumes.values.first { $0.folder == folder }?.id, needed: SpacePolicy.unknownSizeNeed)
        case .failure(let error) where transient:
            retryOrFail(id, RetryPolicy.Failure(error: error, isTransient: true, retryAfter: nil, madeProgress: false))
        case .failure(let error):
            fail(id, error)
        }
        switch pending {
        case .removal(let deleteFile)?:
            stopAndForget(id, deleteFiles: deleteFile)
        case .replacement(let replacement)?:
            stopAndForget(id, deleteFiles: false)
            enqueue([replacement], replacing: true, reply: .ignored)
        case nil:
            break
        }
    }
}
