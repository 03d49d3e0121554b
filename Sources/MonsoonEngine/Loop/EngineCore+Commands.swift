import FoundationEssentials

/// The manager's commands, performed on the transfer thread.
extension EngineCore {
    /// Carries out a user's command as the lifecycle decides it for the download as it is.
    @discardableResult
    func perform(_ command: DownloadLifecycle.Command, on id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        switch DownloadLifecycle.command(command, status: record.status, placing: record.placing) {
        case .none:
            // Resumed or retried while waiting for room: the user asks for it now (the start checks the room).
            if let hold = space.holds.removeValue(forKey: id) { scheduler.line(id, key: hold.key, hosts: hold.hosts) }
        case .pause:
            stopTransfer(id)
            move(id, .pause)
        case .queue(let liftHostHold):
            if liftHostHold { scheduler.lift(scheduler.hostPair(of: record)) }
            requeueFresh(id)
        case .fetchAgain:
            if let path = records.startOver(id) { persistence.releasePath(path, of: id) }
            move(id, .requeue)
        }
        return .success(())
    }

    /// Lets a `.claimedOnly` engine start these downloads for `claimant` (`DownloadScheduler.claim`).
    func claim(_ ids: [DownloadID], by claimant: Int32 = ownClaim) -> Result<Void, DownloadManagerError> {
        guard scheduler.claimed != nil else { return .success(()) }
        for id in ids {
            guard let record = records[id] else { continue }
            if scheduler.claim(record, by: claimant, held: space.holds[id] != nil) { records[id] = record }
        }
        return .success(())
    }

    /// `claimant` no longer wants the download: when nobody does, a running transfer stops,
    /// keeping its part, and the download stays queued for a later run.
    func release(_ id: DownloadID, by claimant: Int32) {
        switch scheduler.release(id, by: claimant, record: records[id]) {
        case .downloading?:
            stopTransfer(id)
            move(id, .requeue)
        case .queued?:
            space.holds[id] = nil
            records.evictIfAtRest(id)   // out of line: a record kept for its start would wait for nothing
        default:
            break
        }
    }

    func setPriority(_ priority: Int, for id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard let before = records[id], let record = records.update(id, { $0.request.priority = priority; return $0 }) else { return .failure(.notFound(id)) }
        space.holds[id] = nil   // queued again under its new priority: the start checks the room
        if before.status == .queued && scheduler.runs(id) { scheduler.reline(id, from: before, to: record) }
        persist(id)
        return .success(())
    }

    func remove(_ id: DownloadID, deleteFile: Bool) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        // The rename is under way off this thread: the removal is finished when it lands.
        if record.placing, case .deferred? = handle(id, .removeRequested(deleteFile: deleteFile)) { return .success(()) }
        if let record = records[id] { forget(record, deleteFiles: deleteFile) }   // as it is after that answer
        return .success(())
    }

    /// Stops and forgets a download as `record` describes it (`PersistenceGateway.forget`).
    func forget(_ record: DownloadRecord, deleteFiles: Bool, rowDeleted: Bool = false) {
        let id = record.request.id
        stopTransfer(id)
        placements.abandon(id)
        scheduler.forget(record)
        space.holds[id] = nil
        persistence.forget(record, deleteFiles: deleteFiles, rowDeleted: rowDeleted, records: &records)
        emit(.removed(id))
    }
}
