import Foundation
import MonsoonStore

/// Keeping the queue in the store, and getting it back.
extension EngineLoop {
    static let progressSaveInterval: TimeInterval = 1

    /// Saves a download's whole state, through the disk worker with the other saves of this
    /// turn of the loop. A record at rest leaves memory once its row is committed: what stays
    /// of a queued one is its index entry.
    func persist(_ id: DownloadID) {
        guard store != nil, let record = records.hot[id] else { return }
        records.saving(id)
        work.append(.save(record))
    }

    /// The disk worker committed these saves.
    func rowsSaved(_ ids: [DownloadID]) {
        records.saved(ids)
    }

    /// Hands this turn's saves and events to the disk worker (events after the rows they
    /// report), or sends the events straight away without a store.
    func submitWork() {
        if !pendingEvents.isEmpty {
            if store != nil {
                work.append(.publish(pendingEvents))
            } else {
                hub.send(pendingEvents)
            }
            pendingEvents.removeAll(keepingCapacity: true)
        }
        guard !work.isEmpty else { return }
        worker.submit(work)
        work.removeAll(keepingCapacity: true)
    }

    /// Runs `body` once everything saved so far is committed, with the first saving error
    /// since (at once, without a store).
    func afterSaving(_ body: @escaping @Sendable (Error?) -> Void) {
        guard store != nil else { return body(nil) }
        work.append(.then(body))
        submitWork()
    }

    /// A part epoch never used before in this process, so a late checkpoint of an old
    /// part can never be taken for the current one, even after the record was reloaded.
    func nextPartEpoch() -> Int {
        partEpochs += 1
        return partEpochs
    }

    /// Saves progress at most once a second per download, and asks for a flush of the
    /// part now and then so a checkpoint (bytes known to be on disk) can be saved.
    func saveProgress(_ id: DownloadID, _ transfer: Transfer, now: Date) {
        guard store != nil, let record = records.hot[id] else { return }
        if now.timeIntervalSince(lastSaved[id] ?? .distantPast) >= Self.progressSaveInterval {
            lastSaved[id] = now
            work.append(.saveProgress(id: id, sequence: record.sequence, bytes: transfer.fileSize, total: transfer.total, checkpoint: record.checkpoint))
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
        let owner = ObjectIdentifier(transfer)
        transfer.checkpointRequested = length
        transfer.checkpointRequestedAt = now
        transfer.checkpointInFlight = true
        let inbox = self.inbox
        placer.flush(fd) { flushed in
            inbox.post { loop in
                // Only the same transfer on the same part: never a record reloaded or restarted since.
                guard var record = loop.records.hot[id], let current = loop.running[id], ObjectIdentifier(current) == owner else { return }
                current.checkpointInFlight = false
                guard flushed, record.partEpoch == epoch, length > record.checkpoint, length <= current.fileSize else { return }
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
        var stored: String?
        note { stored = try store.meta("boot_id") }   // a failure is kept for persistenceError, and is no reboot
        let rebooted = BootID.rebooted(since: stored)
        // One row at a time: a large queue is never all in memory. A row that cannot be
        // read is skipped (and reported), not the end of the restore.
        note {
            try store.transaction {
                try store.forEachRecord(where: "1", skippingUnreadable: { self.storeError = $0 }) { record in
                    self.adopt(record, rebooted: rebooted)
                    self.adoptedThrough = max(self.adoptedThrough, record.sequence)
                }
            }
        }
        if let current = BootID.current { note { try store.setMeta("boot_id", current) } }
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
        if store == nil, let path = record.filePath { worker.claimedPaths.withLock { $0[path] = id } }
        switch record.status {
        case .queued where runs(id): queue.insert(id, key: record.queueKey, host: hosts.id(record.host))
        case .waitingToRetry where runs(id): waiting.insert(id)
        default: break
        }
        if record.status != stored.status || record.bytes != stored.bytes { persist(id) } else { records.evictIfAtRest(id) }
    }

    /// Adds downloads another process put in the store.
    func adoptNewRows() {
        guard let store else { return }
        note { try store.transaction { try self.adoptNewRows(in: store) } }
        needsScheduling = true
    }

    /// Adopts the rows past the last one known (AUTOINCREMENT numbers every process's
    /// rows after all earlier ones; this process's own inserts move `adoptedThrough`
    /// past theirs under the same write lock). Call it inside a transaction: adopting may write.
    func adoptNewRows(in store: DownloadStore) throws {
        var highest = adoptedThrough
        try store.forEachRecord(where: "seq > ?", [adoptedThrough], skippingUnreadable: { self.storeError = $0 }) { row in
            highest = max(highest, row.sequence)
            guard records.hot[row.request.id] == nil else { return }
            adopt(row, rebooted: false)
            emit(.added(row.snapshot()))
            needsScheduling = true
        }
        adoptedThrough = highest
    }
}
