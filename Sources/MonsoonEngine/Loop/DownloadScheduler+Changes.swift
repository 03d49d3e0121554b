import FoundationEssentials

/// The line and the waiting set kept in step with what happens to a download.
extension DownloadScheduler {
    /// A download's status changed (`StatusChange`): out of the line or its wait, into the other.
    /// - Parameter held: it waits for room, out of line (`SpaceGovernor.holds`).
    mutating func moved(_ id: DownloadID, _ change: StatusChange, held: Bool) {
        if change.old == .queued && change.new != .queued { queue.remove(key: change.key) }
        if change.old == .waitingToRetry && change.new != .waitingToRetry { stopWaiting(id) }
        guard runs(id) else { return }
        if change.new == .queued && change.old != .queued && !held {
            line(id, key: change.key, hosts: hostPair(host: change.host, answered: change.answered))
        }
        if change.new == .waitingToRetry { wait(id, until: change.retryAt) }
    }

    /// The transfer of `id` started: the slot taken at its selection is the transfer's now.
    mutating func started(_ id: DownloadID) {
        readAhead.remove(id)
        starting[id] = nil
    }

    /// A download in line changed its place (its priority, or its hosts): out under the old, in under the new.
    mutating func reline(_ id: DownloadID, from old: DownloadRecord, to new: DownloadRecord) {
        queue.remove(key: old.queueKey)
        line(id, key: new.queueKey, hosts: hostPair(of: new))
    }

    /// A stored download taken in: in line, or waiting for its time, if it runs here.
    mutating func adopt(_ record: DownloadRecord) {
        let id = record.request.id
        claimedAhead.remove(id)
        guard runs(id) else { return }
        if record.status == .queued { queue.insert(id, key: record.queueKey, hosts: hostPair(of: record)) }
        if record.status == .waitingToRetry { wait(id, until: record.retryAt) }
    }

    /// The row of `id`, chosen to start, could not be read (the database busy, say): its slot back
    /// and, if still to start (`requeue`), back in line with its host held a second (no asking again at once).
    mutating func startFailed(_ id: DownloadID, requeue: Bool, now: Date) {
        guard let entry = starting[id] else { return }
        releaseStartingSlot(id)
        guard requeue, runs(id) else { return }
        queue.insert(id, key: entry.key, hosts: entry.hosts)
        hold(HostPair(first: entry.hosts.first), until: now.addingTimeInterval(1))
    }

    /// A 429 or 503 that may hold the hosts of `id` (`HostHolds` decides): `host`, its URL's, and
    /// `answered`, the one that answered at the end of the redirects, when known.
    /// - Returns: what the download's error says of the hold (the others on that host wait too); nil: no hold.
    mutating func holdHosts(status: Int, of id: DownloadID, host: String, answered: (id: Int, key: String)?,
                            retryAt: Date, namesWindow: Bool, now: Date) -> String? {
        let pair = HostPair(first: hosts.id(host), last: answered?.id)
        guard let hold = record(status: status, download: id, hosts: pair, retryAt: retryAt, namesWindow: namesWindow, now: now) else { return nil }
        needsScheduling = true
        return HostHolds.text(host: answered?.key ?? host, until: hold.until, reason: hold.reason)
    }
}
