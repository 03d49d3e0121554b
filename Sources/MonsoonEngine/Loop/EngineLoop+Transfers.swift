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
        record.transfer = transfer
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
        guard let transfer = records[id]?.transfer else { return }
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
        guard var record = records[id], record.transfer != nil else { return }
        record.transfer = nil
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
            // The name is fixed at the first 2xx and kept for later attempts and runs.
            if record.filePath == nil {
                let finalURL = transfer.easy.string(CURLINFO_EFFECTIVE_URL)
                switch record.request.destination {
                case .directory(let folder):
                    let name = FileNaming.name(contentDisposition: transfer.head.contentDisposition, finalURL: finalURL)
                    record.filePath = claimPath(in: folder, name: name, for: id)
                case .named(let folder, let stem):
                    let name = FileNaming.name(stem: stem, finalURL: finalURL, mediaTypes: [transfer.head.contentType, record.request.expectedMediaType])
                    record.filePath = claimPath(in: folder, name: name, for: id)
                case .file, .discard:
                    break
                }
            }
            guard let path = record.filePath else { transfer.sink = .aborted; return }
            if let total, total > transfer.maxFileBytes {
                transfer.abortError = DownloadError(.tooLarge, "the file is \(ByteCount.format(total)), larger than the \(ByteCount.format(transfer.maxFileBytes)) limit")
                transfer.sink = .aborted
                records[id] = record
                return
            }
            let partPath = PartFile.path(for: path)
            if let total, let free = FileSystem.freeSpace(at: FileSystem.nearestExistingFolder((path as NSString).deletingLastPathComponent)),
               free < (total - offset) + configuration.diskReserve {
                transfer.abortError = DownloadError(.notEnoughDiskSpace, Self.diskSpaceMessage(needed: total - offset, free: free, reserve: configuration.diskReserve))
                transfer.sink = .aborted
                records[id] = record
                return
            }
            let state: ResumeState
            if offset > 0, let existing = record.resume {
                state = existing
            } else {
                state = ResumeState(url: record.request.url.absoluteString, etag: transfer.head.etag, lastModified: transfer.head.lastModified, total: total)
                transfer.startedFresh = true
                record.startPartOver(epoch: nextPartEpoch())
            }
            record.resume = state
            record.finalURL = transfer.easy.string(CURLINFO_EFFECTIVE_URL)
            record.total = total
            record.bytes = offset
            records[id] = record
            // The row first: its name (so a killed run finds the part) and, when a part with a
            // checkpoint starts over, the reset, flushed before a byte of the new part exists, so
            // a power cut can never pair new bytes with an older, higher checkpoint. A new
            // download has no checkpoint to undo: an ordinary commit does (one fsync less a file).
            let durably = offset == 0 && record.checkpointResetPending
            if persist(id, durably: durably) && durably { records[id]?.checkpointResetPending = false }
            do {
                transfer.fd = try PartFile.open(partPath, at: offset)
            } catch {
                transfer.abortError = error
                transfer.sink = .aborted
                return
            }
            if offset == 0 { PartFile.writeState(state, fd: transfer.fd) }
            transfer.partPath = partPath
            transfer.fileSize = offset
            transfer.writebackStart = offset
            transfer.checkpointRequested = offset
            transfer.total = total
            transfer.sink = .file
        }
    }

    /// A free name in `folder`: the response's name, or "name (2).ext" when another download
    /// holds it or a file of that name is already there.
    private func claimPath(in folder: String, name: String, for id: DownloadID) -> String {
        var candidate = (folder as NSString).appendingPathComponent(name)
        var counter = 2
        // Never another download's file, nor a file already there (another episode's, say).
        while (pathOwner(candidate).map { $0 != id } ?? false) || PartFile.exists(candidate) || PartFile.exists(PartFile.path(for: candidate)) {
            // Numbered before a real extension only ("Ep. 5" is not "Ep" plus " 5").
            let ext = FileNaming.nameExtension(name).map { String(name.suffix($0.count)) } ?? ""
            let stem = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
            let numbered = ext.isEmpty ? "\(stem) (\(counter))" : "\(stem) (\(counter)).\(ext)"
            candidate = (folder as NSString).appendingPathComponent(numbered)
            counter += 1
        }
        claimedPaths[candidate] = id
        return candidate
    }
}
