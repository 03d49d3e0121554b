import CCrypto
import CCurl
import Foundation

/// Starting, deciding and finishing download transfers.
extension EngineLoop {
    func schedule(now: Date) {
        needsScheduling = false
        guard !stopping else { return }
        let scheduler = Scheduler(maxConcurrent: configuration.maxConcurrentDownloads, maxPerHost: configuration.maxDownloadsPerHost)
        for id in scheduler.select(from: queue, running: runningDownloads, runningPerHost: runningPerHost, hostsOnHold: hostsOnHold, now: now) {
            start(id)
        }
        startQueuedFetches()
    }

    /// Starts one attempt: plans resume from the part file, checks free space, adds the handle.
    private func start(_ id: DownloadID) {
        guard var record = records[id] else { return }
        let url = record.request.url.absoluteString
        var plan = AttemptPlan(offset: 0, ifRange: nil)
        if let path = record.filePath {
            let partPath = PartFile.path(for: path)
            if let size = PartFile.size(at: partPath) {
                let state = record.resume ?? PartFile.readState(at: partPath)
                plan = AttemptPlan.plan(partSize: size, state: state, url: url)
                record.resume = plan.offset > 0 ? state : nil
                record.bytes = plan.offset
                record.highWater = max(record.highWater, plan.offset)
                if plan.offset == 0 {
                    PartFile.remove(partPath)  // stale: never splice onto it
                    record.startPartOver(epoch: nextPartEpoch())
                }
            }
        }
        // Free space, before a byte is asked for: the expected rest plus the reserve (a body
        // that is only counted takes none).
        let folder = record.request.destination.folder
        let expected = record.resume?.total ?? record.total ?? record.request.expectedSize
        let remaining = max(0, (expected ?? 0) - plan.offset)
        let writes: Bool = { if case .discard = record.request.destination { return false } else { return true } }()
        if writes, let free = FileSystem.freeSpace(at: FileSystem.nearestExistingFolder(folder.isEmpty ? "." : folder)),
           free < remaining + configuration.diskReserve {
            records[id] = record
            fail(id, DownloadError(.notEnoughDiskSpace, Self.diskSpaceMessage(needed: remaining, free: free, reserve: configuration.diskReserve)))
            needsScheduling = true   // the slot it did not take may go to the next one
            return
        }

        let transfer = Transfer(purpose: .download(id), plan: plan)
        transfer.configure(url: url, headers: record.request.headers, configuration: configuration, bufferSize: Self.downloadBufferSize)
        transfer.partPath = record.filePath.map(PartFile.path(for:))
        transfer.fileSize = plan.offset
        transfer.total = record.resume?.total
        transfer.maxFileBytes = configuration.maxFileBytes ?? Int.max
        transfer.decide = { [unowned self] transfer in self.decideBody(transfer) }
        guard multi.add(transfer.easy) else {
            records[id] = record
            fail(id, DownloadError(.network, "libcurl refused to start the transfer"))
            needsScheduling = true
            return
        }
        transfers[transfer.easy.raw] = transfer
        running[id] = transfer
        record.isRunning = true
        records[id] = record
        runningDownloads += 1
        runningPerHost[hosts.id(record.host), default: 0] += 1
        // Saved with the first body byte (its name and status in one commit): a run killed
        // before it leaves the row queued, which is what it is.
        setStatus(id, .downloading, saving: false)
    }

    static func diskSpaceMessage(needed: Int, free: Int, reserve: Int) -> String {
        "not enough disk space: \(ByteCount.format(needed)) needed plus a \(ByteCount.format(reserve)) reserve, \(ByteCount.format(free)) free; free some space, then retry"
    }

    /// Removes a running transfer, keeping its part file for a later resume.
    func stopTransfer(_ id: DownloadID) {
        preparing[id] = nil   // a part being prepared is closed when it comes back
        guard let transfer = running[id] else { return }
        multi.remove(transfer.easy)
        transfers[transfer.easy.raw] = nil
        releaseSlot(id)
        if transfer.fd >= 0 {
            close(transfer.fd)
            transfer.fd = -1
        }
        if case .file = transfer.sink { records[id]?.bytes = transfer.fileSize }
    }

    func releaseSlot(_ id: DownloadID) {
        guard var record = records[id], running.removeValue(forKey: id) != nil else { return }
        record.isRunning = false
        records[id] = record
        runningDownloads -= 1
        let host = hosts.id(record.host)
        runningPerHost[host, default: 1] -= 1
        if runningPerHost[host] == 0 { runningPerHost[host] = nil }
        needsScheduling = true
    }

    // MARK: - The first body byte

    /// Decides where the body goes, once the status and headers are known.
    /// Called from curl's write callback (or at the end for a body-less response).
    func decideBody(_ transfer: Transfer) {
        guard let id = transfer.downloadID, var record = records[id] else {
            transfer.sink = .aborted
            return
        }
        switch BodyDecision.decide(head: transfer.head, plan: transfer.plan, state: record.resume, expectedMediaType: record.request.expectedMediaType) {
        case .discard:
            transfer.sink = .discard
        case .fail(let error):
            transfer.abortError = error
            transfer.sink = .aborted
        case .restartFresh(let reason):
            transfer.restartReason = reason
            transfer.sink = .aborted
        case .write(_, let total) where { if case .discard = record.request.destination { return true } else { return false } }():
            // Nothing to name, check or create: the body is counted (and hashed).
            if case .discard(let checksum) = record.request.destination, checksum { transfer.digest = monsoon_sha256_new() }
            record.total = total
            record.bytes = 0
            record.finalURL = transfer.easy.string(CURLINFO_EFFECTIVE_URL)
            records[id] = record
            transfer.fileSize = 0
            transfer.total = total
            transfer.sink = .count
        case .write(let offset, let total):
            if let total, total > transfer.maxFileBytes {
                transfer.abortError = DownloadError(.tooLarge, "the file is \(ByteCount.format(total)), larger than the \(ByteCount.format(transfer.maxFileBytes)) limit")
                transfer.sink = .aborted
                return
            }
            var newState: ResumeState?
            if offset == 0 || record.resume == nil {
                newState = ResumeState(url: record.request.url.absoluteString, etag: transfer.head.etag, lastModified: transfer.head.lastModified, total: total)
                transfer.startedFresh = true
                record.startPartOver(epoch: nextPartEpoch())
                record.resume = newState
            }
            record.finalURL = transfer.easy.string(CURLINFO_EFFECTIVE_URL)
            record.total = total
            record.bytes = offset
            // When a part with a checkpoint starts over, the reset is flushed before a byte of
            // the new part exists, so a power cut can never pair new bytes with an older, higher
            // checkpoint. A new download has no checkpoint to undo: an ordinary commit does.
            let durably = offset == 0 && record.checkpointResetPending
            record.checkpointResetPending = false
            records[id] = record
            // The name, the space check, the row and the part happen on the disk worker; curl
            // holds the body meanwhile (the write callback pauses the transfer).
            transfer.sink = .preparing
            transfer.fileSize = offset
            transfer.total = total
            preparing[id] = transfer
            work.append(.prepare(BodyPreparation(
                row: record, attempt: ObjectIdentifier(transfer), contentDisposition: transfer.head.contentDisposition,
                contentType: transfer.head.contentType, finalURL: record.finalURL, offset: offset, total: total,
                newState: offset == 0 ? newState : nil, durably: durably, diskReserve: configuration.diskReserve)))
            if store != nil { records.saving(id) }
        }
    }

    /// The disk worker's answer for a part: write into it (letting curl go on), or fail the attempt.
    func bodyPrepared(_ id: DownloadID, attempt: ObjectIdentifier, _ outcome: BodyPreparation.Outcome) {
        if store != nil { records.saved([id]) }
        let transfer = preparing[id].flatMap { ObjectIdentifier($0) == attempt ? $0 : nil }
        if transfer != nil { preparing[id] = nil }
        let path: String? = switch outcome {
        case .ready(_, let chosen): chosen
        case .failed(_, let chosen): chosen
        }
        // The name sticks for later attempts and runs (saved again if a save since lacked it).
        if let path, var record = records[id], record.filePath != path {
            record.filePath = path
            records[id] = record
            persist(id)
        }
        guard let transfer, case .preparing = transfer.sink else {
            // Stopped meanwhile (paused, removed, shut down): the part stays for a later attempt.
            if case .ready(let fd, _) = outcome { close(fd) }
            return
        }
        switch outcome {
        case .ready(let fd, let path):
            transfer.fd = fd
            transfer.partPath = PartFile.path(for: path)
            transfer.writebackStart = transfer.fileSize
            transfer.checkpointRequested = transfer.fileSize
            transfer.sink = .file
        case .failed(let error, _):
            // Its row may not have been saved: a reset checkpoint is flushed again next time.
            records[id]?.checkpointResetPending = true
            transfer.abortError = error
            transfer.sink = .aborted
        }
        if let code = transfer.endedWhilePreparing {
            // A body-less response: its (empty) part is ready, so the attempt can end now.
            let host = records[id]?.host ?? ""
            finishDownload(id, transfer, code: code)
            report(id, host: host, transfer, code: code)
            return
        }
        // curl delivers the held bytes (perhaps before this returns); an aborted sink ends it.
        let code = transfer.easy.unpause()
        if code != CURLE_OK, transfer.abortError == nil {
            transfer.abortError = DownloadError(.network, "could not go on with the transfer: \(Curl.describe(code))")
        }
    }
}
