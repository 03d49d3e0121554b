import Foundation
import MonsoonStore

/// Keeping the queue in the store, and getting it back.
extension EngineCore {
    /// Saves a download's whole state, through the disk worker with the other saves of this
    /// turn of the loop. A record at rest leaves memory once its row is committed: what stays
    /// of a queued one is its index entry.
    func persist(_ id: DownloadID) {
        guard persistence.persistent, let record = records.hot[id] else { return }
        records.saving(id)
        // A completion is flushed with its commit, before it is reported (one flush for all
        // the rows of a batch): a file reported complete is in the database after a power cut.
        // So is a checkpoint's reset: new bytes must never meet the old checkpoint.
        persistence.hand(.save(record, durably: record.status == .completed || record.checkpointResetPending))
    }

    /// The disk worker committed these saves.
    func rowsSaved(_ ids: [DownloadID], deleted: [(DownloadID, Int)]) {
        records.saved(ids)
        records.deleted(deleted)
    }

    /// Hands this turn's saves and events to the disk worker (events after the rows they
    /// report), or sends the events straight away without a store.
    func submitWork() {
        if let events = events.take() {
            if persistence.persistent {
                persistence.hand(.publish(events))
            } else {
                hub.send(events)
            }
        }
        guard let work = persistence.takeWork() else { return }
        worker.submit(work)
    }

    /// Runs `read` on the disk worker (with the store, after everything handed to it before),
    /// then `body` back on this thread with its result; `ifClosed` instead when the engine shut
    /// down meanwhile. The transfer thread never waits for the disk or the database.
    func onWorker<T: Sendable>(_ read: @escaping @Sendable ((any QueueStore)?) -> T,
                               then body: @escaping @Sendable (EngineCore, T) -> Void,
                               ifClosed: @escaping @Sendable () -> Void) {
        let inbox = self.inbox
        persistence.hand(.job { store in
            let value = read(store)
            if !inbox.resume({ body($0, value) }) { ifClosed() }
        })
    }

    /// Runs `body` with the records of `ids` at hand (`records[id]`): those in memory, the rest
    /// read by the disk worker first. A failed read is `body`'s answer instead.
    /// - Parameter skippingUnreadable: leave out a row that cannot be read (kept for
    ///   `persistenceError`) rather than fail the read: for other processes' commands, where one
    ///   damaged row must not hold back every command queued after it.
    func withRows(_ ids: [DownloadID], skippingUnreadable: Bool = false, ifClosed: @escaping @Sendable () -> Void,
                  _ body: @escaping @Sendable (EngineCore, Result<Void, DownloadManagerError>) -> Void) {
        var missing: [DownloadID] = []
        var held: [DownloadID] = []
        for id in ids { if !records.isHot(id) { missing.append(id) } else { held.append(id) } }
        // While the queue is restored, every command waits behind it on the worker.
        guard persistence.persistent, !missing.isEmpty || persistence.restoring else { return body(self, .success(())) }
        // Those in memory now stay until `body` has them: a save confirmed meanwhile would let one
        // at rest go, and its command would find no download.
        for id in held { records.pin(id) }
        onWorker({ [missing] store in
            Result {
                var unreadable: ErrorBox?
                let rows = try store?.records(withIDs: missing, skippingUnreadable: skippingUnreadable ? { unreadable = ErrorBox(error: $0) } : nil) ?? []
                return (rows, unreadable)
            }.mapError { ErrorBox(error: $0) }
        }, then: { [held] loop, read in
            defer { for id in held { loop.records.unpin(id) } }
            switch read {
            case .success(let (rows, unreadable)):
                if let unreadable { loop.persistence.failed(unreadable.error) }
                loop.records.preload(rows)
                body(loop, .success(()))
                loop.records.endPreload()
            case .failure(let box):
                loop.persistence.failed(box.error)
                body(loop, .failure(.storage("could not read the queue", cause: box.error)))
            }
        }, ifClosed: ifClosed)
    }

    /// Runs `body` once everything handed to the disk worker so far is done (rows committed,
    /// files deleted), with the first saving error since.
    func afterSaving(_ body: @escaping @Sendable (Error?) -> Void) {
        persistence.hand(.then(body))
        submitWork()
    }

    /// Saves progress at most once a second per download, and asks for a flush of the
    /// part now and then so a checkpoint (bytes known to be on disk) can be saved.
    func saveProgress(_ id: DownloadID, _ transfer: Transfer, now: Date) {
        guard persistence.persistent, let record = records.hot[id] else { return }
        if persistence.progressSaveDue(id, now: now) {
            persistence.hand(.saveProgress(id: id, sequence: record.sequence, bytes: transfer.progress.fileSize, total: transfer.progress.total, checkpoint: record.checkpoint))
        }
        requestCheckpoint(id, transfer, now: now)
    }

    /// Flushes the part off this thread every few MiB or seconds; the flushed length
    /// becomes the checkpoint when it lands (if the part was not restarted meanwhile).
    private func requestCheckpoint(_ id: DownloadID, _ transfer: Transfer, now: Date) {
        let checkpoint = transfer.part.checkpoint
        guard transfer.part.fd >= 0, transfer.progress.fileSize > checkpoint.requested, !checkpoint.inFlight else { return }
        let due = transfer.progress.fileSize - checkpoint.requested >= configuration.checkpoint.bytes
            || now.timeIntervalSince(checkpoint.requestedAt) >= configuration.checkpoint.seconds
        guard due else { return }
        let fd = fcntl(transfer.part.fd, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { return }
        let length = transfer.progress.fileSize
        let epoch = records[id]?.partEpoch ?? 0
        let owner = ObjectIdentifier(transfer)
        transfer.part.checkpoint = Transfer.Checkpoint(requested: length, requestedAt: now, inFlight: true)
        let inbox = self.inbox
        placer.flush(fd) { flushed in
            inbox.send(.checkpointFlushed(id, attempt: owner, epoch: epoch, length: length, flushed: flushed))
        }
    }

    // MARK: - Restore

    /// What the disk worker answers while it restores the queue, in order.
    enum Restored: Sendable {
        /// Rows as stored, each with its part inspected (a chunk: a large queue is never all in memory).
        case rows([(stored: DownloadRecord, inspected: DownloadRecord)])
        /// A row or a part that could not be read or cut back (kept for `persistenceError`).
        case problem(ErrorBox)
        /// Every row is in: the next sequence to give out (nil: unknown).
        case done(nextSequence: Int?)
    }

    /// Rows handed back at a time.
    static let restoreChunk = 512

    /// Has the disk worker load the queue as it was left: downloading becomes queued again (its
    /// part resumes with Range), waiting-to-retry keeps its time, the rest stay as they are.
    /// Its first work: commands posted meanwhile read their rows after it (`withRows`), and no
    /// transfer starts until it has answered (`persistence.restoring`), while fetches go on.
    func requestRestore() {
        let stopped = persistence.restoreStarted()
        let inbox = self.inbox
        persistence.hand(.job { store in
            guard let store else { return }
            Self.restore(from: store) { !stopped() && inbox.send(.restored($0)) }
        })
    }

    /// Reads every row and looks at its part (disk worker), handing them to `post` in chunks;
    /// stops reading once `post` fails (the engine shut down).
    static func restore(from store: any QueueStore, post: @escaping (Restored) -> Bool) {
        var open = true
        func note(_ operation: () throws -> Void) {
            do { try operation() } catch { open = post(.problem(ErrorBox(error: error))) && open }
        }
        // After a reboot, bytes past the last flush may be garbage: cut parts back to their checkpoints.
        var stored: String?
        var storedWasRead = false
        note {   // a failure is reported, and is no reboot
            stored = try store.meta("boot_id")
            storedWasRead = true
        }
        let rebooted = BootID.rebooted(since: stored)
        var cutFailed = false
        var restoredAll = false
        var chunk: [(stored: DownloadRecord, inspected: DownloadRecord)] = []
        // One row at a time, handed on in chunks. A row that cannot be read is skipped (and
        // reported), not the end of the restore.
        note {
            try store.transaction {
                try store.forEachRecord(after: 0, skippingUnreadable: {
                    open = post(.problem(ErrorBox(error: $0))) && open
                    cutFailed = true   // its part was not looked at
                }) { record in
                    guard open else { return }   // shut down: what is left is not needed
                    var problem: DownloadError?
                    let inspected = record.inspectingPart(rebooted: rebooted, problem: &problem)
                    chunk.append((record, inspected))
                    if let problem {
                        open = post(.problem(ErrorBox(error: problem))) && open
                        if inspected.status == .failed { cutFailed = true }   // the part is still there, uncut
                    }
                    if chunk.count == restoreChunk {
                        open = post(.rows(chunk)) && open
                        chunk = []
                    }
                }
            }
            restoredAll = open
        }
        if !chunk.isEmpty { open = post(.rows(chunk)) && open }
        // Replaced only once read, and every row read and its part cut back: otherwise a reboot
        // since the stored id would go unnoticed by every later run.
        if storedWasRead, restoredAll, !cutFailed, let current = BootID.current, current != stored { note { try store.setMeta("boot_id", current) } }
        var next: Int?
        note { next = try store.nextSequence() }
        _ = post(.done(nextSequence: next))   // not posted: shut down, nothing waits for it
    }

    /// The disk worker's answer to `requestRestore`.
    func restored(_ message: Restored) {
        switch message {
        case .rows(let rows):
            // Nothing of these is in memory yet: every command reads its rows after the restore.
            for (stored, inspected) in rows where !records.isHot(stored.request.id) {
                adopt(stored, as: inspected)
                persistence.adopted(through: stored.sequence)
            }
        case .problem(let box):
            persistence.failed(box.error)
        case .done(let next):
            if let next { records.numbered(through: next - 1) }
            scheduler.needsScheduling = true
            let waiting = persistence.restoreEnded()
            if !waiting.isEmpty { adoptNewRows { loop, result in for done in waiting { done(loop, result) } } }
        }
    }

    /// Takes a stored download into the loop (at restore, or when another process added it),
    /// as its part says it is (`inspected`).
    func adopt(_ stored: DownloadRecord, as inspected: DownloadRecord) {
        let record = inspected
        let id = record.request.id
        records.numbered(through: record.sequence)
        records[id] = record
        if !persistence.persistent, let path = record.filePath { worker.claimedPaths.withLock { $0[path] = id } }
        switch record.status {
        case .queued where runs(id): scheduler.queue.insert(id, key: record.queueKey, hosts: scheduler.hostPair(of: record))
        case .waitingToRetry where runs(id): scheduler.wait(id, until: record.retryAt)
        default: break
        }
        if record.status != stored.status || record.bytes != stored.bytes { persist(id) } else { records.evictIfAtRest(id) }
    }

    /// Adds downloads another process put in the store: the disk worker reads them (and
    /// looks at their parts), this thread takes them in.
    func adoptNewRows(then done: @escaping @Sendable (EngineCore, Result<Void, DownloadManagerError>) -> Void = { _, _ in }) {
        guard persistence.persistent else { return done(self, .success(())) }
        guard !persistence.restoring else { return persistence.adoptAfterRestore(done) }
        let after = persistence.adoptedThrough
        onWorker({ store in
            Result { try store.map { try Self.newRows(in: $0, after: after) } ?? NewRows() }.mapError { ErrorBox(error: $0) }
        }, then: { loop, rows in
            switch rows {
            case .success(let rows):
                if let box = rows.unreadable { loop.persistence.failed(box.error) }
                loop.adoptRows(rows.rows)
                done(loop, .success(()))
            case .failure(let box):
                loop.persistence.failed(box.error)
                done(loop, .failure(.storage("could not read the queue", cause: box.error)))
            }
        }, ifClosed: {})
    }

    /// Rows another process added, each with its part inspected.
    struct NewRows: Sendable {
        var rows: [(stored: DownloadRecord, inspected: DownloadRecord)] = []
        /// Why a row was left out (it stays in the table; `persistenceError` reports it).
        var unreadable: ErrorBox?
    }

    /// The rows past `sequence` (AUTOINCREMENT numbers every process's rows after all earlier
    /// ones), each with its part inspected. Disk worker.
    static func newRows(in store: any QueueStore, after sequence: Int) throws -> NewRows {
        var found = NewRows()
        try store.forEachRecord(after: sequence, skippingUnreadable: { found.unreadable = found.unreadable ?? ErrorBox(error: $0) }) { row in
            var unused: DownloadError?   // set only when cutting back after a reboot, which this is not
            found.rows.append((row, row.inspectingPart(rebooted: false, problem: &unused)))
        }
        return found
    }

    /// Takes in rows another process added (each once: those past the last one known).
    func adoptRows(_ rows: [(stored: DownloadRecord, inspected: DownloadRecord)]) {
        for (stored, inspected) in rows where persistence.isNew(stored.sequence) {
            if !records.isHot(stored.request.id) {
                adopt(stored, as: inspected)
                if hub.wants(.added) { emit(.added(stored.snapshot())) }
            }
            persistence.adopted(through: stored.sequence)
        }
        scheduler.needsScheduling = true
    }
}
