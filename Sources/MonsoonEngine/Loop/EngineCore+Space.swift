/// What the space governor decides, carried out on the queue and the records.
extension EngineCore {
    /// - Returns: the disk it writes to (nil inside: not measured); nil: it gave its slot back, then
    ///   failed (a read-only disk) or waits, queued, for room.
    func roomToStart(_ id: DownloadID, _ record: DownloadRecord, _ ready: StartPreparation.Ready, known: Int?, expected: Int?) -> Volume?? {
        let room = space.roomToStart(folder: record.request.destination.folder, measured: ready.space, reused: ready.spaceReused,
                                     offset: ready.plan.offset, known: known, expected: expected, now: configuration.clock.now,
                                     running: transfers.running.values)
        if case .starts(let volume) = room { return .some(volume) }
        scheduler.releaseStartingSlot(id)
        if case .noRoom(let error, let volume, let needed, let trusted) = room {
            holdForSpace(id, error, volume: volume, needed: needed, trusted: trusted)
        } else if case .readOnly(let error) = room {
            fail(id, error)
        }
        return nil
    }

    func spaceMeasured(_ id: UInt64, _ free: Int?, writtenAtRequest: Int) {
        space.measured(id, free: free, writtenAtRequest: writtenAtRequest, now: configuration.clock.now, running: transfers.running.values)
        releaseSpaceHolds()
    }

    /// Keeps a download queued, out of line, until its disk has room or the user retries it.
    /// - Parameter trusted: false for a caller's expected size, which may be wrong (`SpaceGovernor.releasable`).
    func holdForSpace(_ id: DownloadID, _ error: DownloadError, volume: UInt64?, needed: Int, trusted: Bool = true) {
        guard let record = records.update(id, { record in
            record.lastError = error
            return record
        }) else { return }
        space.holds[id] = SpaceHold(key: record.queueKey, hosts: scheduler.hostPair(of: record), volume: volume, needed: max(1, needed), trusted: trusted)
        move(id, .holdForSpace)
    }

    /// Back in line, those whose disks have room now: their starts check it again.
    func releaseSpaceHolds() {
        for (id, hold) in space.releasable(running: transfers.running.values) { scheduler.line(id, key: hold.key, hosts: hold.hosts) }
    }
}
