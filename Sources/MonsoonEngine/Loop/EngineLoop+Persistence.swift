import Foundation
import MonsoonStore

/// Keeping the queue in the store, and getting it back.
extension EngineLoop {
    static let progressSaveInterval: TimeInterval = 1

    /// Saves a download's whole state: one small transaction.
    /// A record at rest then leaves memory: what stays of a queued one is its index entry.
    func persist(_ id: DownloadID) {
        guard let store, let record = records.hot[id] else { return }
        do {
            try store.update(record)
            records.evictIfAtRest(id)
        } catch {
            storeError = error
        }
    }

    /// Saves progress at most once a second per download, and asks for a flush of the
    /// part now and then so a checkpoint (bytes known to be on disk) can be saved.
    func saveProgress(_ id: DownloadID, _ transfer: Transfer, now: Date) {
        guard let store else { return }
        if now.timeIntervalSince(lastSaved[id] ?? .distantPast) >= Self.progressSaveInterval {
            lastSaved[id] = now
            let checkpoint = records[id]?.checkpoint
            note { try store.updateProgress(id: id, bytes: transfer.fileSize, total: transfer.total, checkpoint: checkpoint) }
        }
        requestCheckpoint(id, transfer, now: now)
    }

    /// Flushes the part off this thread every few MiB or seconds; the flushed length
    /// becomes the checkpoint when it lands (if the part was not restarted meanwhile).
    private func requestCheckpoint(_ id: DownloadID, _ transfer: Transfer, now: Date) {
        guard transfer.fd >= 0, transfer.fileSize > transfer.checkpointRequested, transfer.checkpointInFlight == false else { return }
        let due = transfer.fileSize - transfer.checkpointRequested >= configuration.checkpointBytes
            || now.timeIntervalSince(transfer.checkpointRequestedAt) >= configuration.checkpointSeconds
        guard due else { return }
        let fd = dup(transfer.fd)
        guard fd >= 0 else { return }
        let length = transfer.fileSize
        let epoch = records[id]?.partEpoch ?? 0
        transfer.checkpointRequested = length
        transfer.checkpointRequestedAt = now
        transfer.checkpointInFlight = true
        let inbox = self.inbox
        placementQueue.addOperation {
            let flushed = fdatasync(fd) == 0
            close(fd)
            inbox.post { loop in
                loop.records[id]?.transfer?.checkpointInFlight = false
                guard flushed, var record = loop.records[id], record.partEpoch == epoch, length > record.checkpoint else { return }
                record.checkpoint = length
                loop.records[id] = record
            }
        }
    }

    /// Runs a store operation, keeping its failure for `persistenceError` instead of
    /// stopping downloads: the bytes are safe on disk, and a restart re-reads the part.
    func note(_ operation: () throws -> Void) {
        do { try operation() } catch { storeError = error }
    }

    // MARK: - Restore

    /// Loads the queue as it was left: downloading becomes queued again (its part
    /// resumes with Range), waiting-to-retry keeps its time, the rest stay as they are.
    func restore() {
        guard let store else { return }
        // After a reboot, bytes past the last flush may be garbage: cut parts back to their checkpoints.
        let rebooted = ((try? store.meta("boot_id")) ?? nil) != BootID.current
        // One row at a time: a large queue is never all in memory.
        note { try store.transaction { try store.forEachRecord(where: "1") { self.adopt($0, rebooted: rebooted) } } }
        note { try store.setMeta("boot_id", BootID.current) }
        note { nextSequence = max(nextSequence, try store.nextSequence()) }
        needsScheduling = true
    }

    /// Takes a stored download into the loop (at restore, or when another process added it).
    func adopt(_ stored: DownloadRecord, rebooted: Bool) {
        var record = stored
        let id = record.request.id
        nextSequence = max(nextSequence, record.sequence + 1)
        if record.status == .downloading { record.status = .queued }
        if let path = record.filePath, record.status != .completed {
            let partPath = PartFile.path(for: path)
            if var size = PartFile.size(at: partPath) {
                if rebooted && size > record.checkpoint {
                    truncate(partPath, off_t(record.checkpoint))
                    size = record.checkpoint
                }
                record.bytes = size
            } else if let total = record.total, PartFile.size(at: path) == total, record.status != .failed {
                // Stopped between the rename and saving the row: the file in place is whole
                // (it is renamed only after an fsync).
                record.status = .completed
                record.bytes = total
            } else {
                record.bytes = 0
            }
        }
        records[id] = record
        if store == nil, let path = record.filePath { claimedPaths[path] = id }
        switch record.status {
        case .queued: queue.insert(id, key: record.queueKey, host: hosts.id(record.host))
        case .waitingToRetry: waiting.insert(id)
        default: break
        }
        if record.status != stored.status || record.bytes != stored.bytes { persist(id) } else { records.evictIfAtRest(id) }
    }

    /// Adds downloads another process put in the store, by id.
    func adoptNewRows() {
        guard let store else { return }
        // Others' rows come after every row this process knows (AUTOINCREMENT).
        note {
            try store.forEachRecord(where: "seq >= ?", [nextSequence]) { row in
                adopt(row, rebooted: false)
                emit(.added(row.snapshot()))
            }
        }
        needsScheduling = true
    }
}
