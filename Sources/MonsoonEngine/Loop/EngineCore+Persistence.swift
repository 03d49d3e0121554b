import FoundationEssentials

/// Routing between the `PersistenceGateway`, which keeps the queue in the store, and the other parts.
extension EngineCore {
    func persist(_ id: DownloadID) { persistence.save(id, records: &records) }
    func submitWork() { persistence.submit(events.take()) }
    /// Runs `body` once everything handed to the disk worker so far is done, with the first saving error since.
    func afterSaving(_ body: @escaping @Sendable (Error?) -> Void) { persistence.submit(events.take(), then: body) }

    /// Runs `body` with the records of `ids` at hand (`PersistenceGateway.rowsToRead`), or with the failure to read them.
    func withRows(_ ids: [DownloadID], skippingUnreadable: Bool = false, ifClosed: @escaping @Sendable () -> Void,
                  _ body: @escaping @Sendable (EngineCore, Result<Void, DownloadManagerError>) -> Void) {
        if let listed = persistence.takeListed(ids, records: records, now: configuration.clock.now) {   // as a read now would find them
            records.preload(listed)
            body(self, .success(()))
            return records.endPreload(listed.map(\.request.id))
        }
        guard let rows = persistence.rowsToRead(ids, skippingUnreadable: skippingUnreadable, pinning: &records) else { return body(self, .success(())) }
        persistence.onWorker(rows.read, then: { loop, read in
            let result = loop.persistence.took(read).map { loop.records.preload($0) }
            body(loop, result)
            loop.persistence.finished(rows, result, records: &loop.records)
        }, ifClosed: ifClosed)
    }

    func restored(_ message: RestoreReader.Message) {
        let step = persistence.restored(message, records: records)
        if case .adopt(let rows)? = step { for row in rows { persistence.adopt(row, into: &records, scheduler: &scheduler) } }
        guard case .done(let next, let adoptions, let readAll)? = step else { return }
        scheduler.restoreEnded(claimant: Self.ownClaim, readAll: readAll)
        records.numbered(through: next - 1)
        scheduler.needsScheduling = true
        if let adoptions { adoptNewRows(replying: adoptions) }
    }

    /// Takes in the downloads other processes put in the store, then answers `replies`.
    func adoptNewRows(replying replies: [CommandReply<Void>]) {
        guard persistence.persistent else { return replies.forEach { $0(self, .success(())) } }
        guard let after = persistence.newRowsToRead(replying: replies) else { return }
        persistence.onWorker(RestoreReader.newRows(after: after), then: { loop, read in
            let rows = loop.persistence.took(read)
            if case .success(let rows) = rows { loop.adoptRows(rows) }
            replies.forEach { $0(loop, rows.map { _ in () }) }
        }, ifClosed: {})
    }

    func adoptRows(_ rows: [RestoreReader.Row]) {
        for row in persistence.unseen(rows, records: records) {
            persistence.adopt(row, into: &records, scheduler: &scheduler)
            if hub.wants(.added) { emit(.added(row.stored.snapshot())) }
        }
        scheduler.needsScheduling = true
    }
}
