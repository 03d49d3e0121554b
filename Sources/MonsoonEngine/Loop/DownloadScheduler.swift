import FoundationEssentials

/// Which downloads may start and when: the line of queued downloads, the slots they take, the
/// downloads waiting to retry, the held hosts, and their timers (in a `DeadlineHeap`: the poll's
/// timeout costs O(log n), not a walk over every waiting download each turn). Confined to the
/// transfer thread; the pure `Scheduler` picks which queued downloads start.
struct DownloadScheduler {
    enum Timer: Hashable {
        case retry(DownloadID)
        case holdEnd(host: Int)
    }

    var queue = QueueIndex()
    var hosts = HostTable()
    /// Slots taken: downloads starting or running.
    private(set) var runningDownloads = 0
    /// Transfers running per host (a transfer counts on each of its hosts; fetches count too).
    private(set) var runningPerHost: [Int: Int] = [:]
    /// Downloads waiting to retry (those without a retry time wait until something moves them).
    private(set) var waiting: Set<DownloadID> = []
    private(set) var hostHolds = HostHolds()
    private(set) var timers = DeadlineHeap<Timer>()
    /// Downloads chosen to start whose part the worker is looking at, with their queue entry
    /// (they hold a slot).
    var starting: [DownloadID: QueueIndex.Entry] = [:]
    /// Queued downloads whose rows the worker is reading ahead of their start.
    var prefetching: Set<DownloadID> = []
    /// Downloads whose rows were read ahead and kept in memory, until they start or leave the line.
    var readAhead: Set<DownloadID> = []
    /// With `QueueScope.claimedOnly`, the downloads this engine may start, each with who
    /// wants it: `ownClaim` for this process, else the pids of the processes that handed it
    /// over. Nil: all of them.
    var claimed: [DownloadID: Set<Int32>]?
    /// Claimed as the engine opened (`claimAhead`), their rows not yet met in the restore.
    var claimedAhead: Set<DownloadID> = []
    var needsScheduling = true

    init(claimedOnly: Bool = false) {
        if claimedOnly { claimed = [:] }
    }

    /// `entry` was chosen to start: it leaves the line and takes a slot while its part is looked at.
    mutating func take(_ entry: QueueIndex.Entry) {
        queue.remove(key: entry.key)
        starting[entry.id] = entry
        runningDownloads += 1
        count(entry.hosts.each)
    }

    /// Gives back the slot `id` took when it was chosen to start, if it still holds it.
    mutating func releaseStartingSlot(_ id: DownloadID) {
        guard let hosts = starting.removeValue(forKey: id)?.hosts else { return }
        releaseSlot(countedOn: hosts.each)
    }

    mutating func releaseSlot(countedOn hosts: [Int]) {
        runningDownloads -= 1
        uncount(hosts)
        needsScheduling = true
    }

    mutating func count(_ hosts: [Int]) {
        for host in hosts { runningPerHost[host, default: 0] += 1 }
    }

    mutating func uncount(_ hosts: [Int]) {
        for host in hosts {
            runningPerHost[host, default: 1] -= 1
            if runningPerHost[host] == 0 { runningPerHost[host] = nil }
        }
    }

    /// `id` waits to retry at `at` (nil: until something moves it); a new time replaces the old.
    mutating func wait(_ id: DownloadID, until at: Date?) {
        waiting.insert(id)
        if let at { timers.schedule(.retry(id), at: at) } else { timers.cancel(.retry(id)) }
    }

    /// `id` no longer waits to retry: its timer goes too, so it never wakes the loop.
    mutating func stopWaiting(_ id: DownloadID) {
        waiting.remove(id)
        timers.cancel(.retry(id))
    }

    mutating func hold(_ hosts: HostPair, until date: Date) {
        hostHolds.hold(hosts, until: date)
        scheduleHoldEnds(hosts)
    }

    /// What an error status means for a download's hosts (see `HostHolds.record`).
    mutating func record(status: Int, download: DownloadID, hosts: HostPair, retryAt: Date, namesWindow: Bool, now: Date) -> (until: Date, reason: HostHolds.Reason)? {
        let hold = hostHolds.record(status: status, download: download, hosts: hosts, retryAt: retryAt, namesWindow: namesWindow, now: now)
        if hold != nil { scheduleHoldEnds(hosts) }
        return hold
    }

    mutating func lift(_ hosts: HostPair) {
        hostHolds.lift(hosts)
        for host in hosts.each { timers.cancel(.holdEnd(host: host)) }
    }

    private mutating func scheduleHoldEnds(_ hosts: HostPair) {
        for host in hosts.each {
            if let end = hostHolds.until[host] { timers.schedule(.holdEnd(host: host), at: end) }
        }
    }

    var nextDeadline: Date? { timers.next?.at }

    /// Takes the timers due at `now`: returns the downloads whose retry is due, earliest first. A
    /// hold that ran out asks for scheduling: nothing else may start its host's queued downloads
    /// (a start whose row could not be read, held alone).
    mutating func takeDue(now: Date) -> [DownloadID] {
        var retries: [DownloadID] = []
        var holdEnded = false
        for timer in timers.popDue(now: now) {
            switch timer {
            case .retry(let id):
                waiting.remove(id)
                retries.append(id)
            case .holdEnd:
                holdEnded = true
            }
        }
        if holdEnded {
            hostHolds.expire(now: now)
            if !queue.isEmpty { needsScheduling = true }
        }
        return retries
    }

    /// The downloads to start now (`Scheduler.selectEntries`), but none already starting (queued
    /// again while its start is prepared: that start goes on). An attempt that ended while its part
    /// is prepared gave its slot back; past as many of them as there are slots, the next starts
    /// wait (a slow disk worker slows starts).
    func select(_ policy: Scheduler, endedAwaitingParts: Int = 0, now: Date) -> [QueueIndex.Entry] {
        let busy = runningDownloads + max(0, endedAwaitingParts - policy.maxConcurrent)
        return policy.selectEntries(from: queue, running: busy, runningPerHost: runningPerHost, hostsOnHold: hostHolds.until, now: now)
            .filter { starting[$0.id] == nil }
    }

    /// Whether this engine may start `id` (see `QueueScope`).
    func runs(_ id: DownloadID) -> Bool {
        claimed.map { $0[id] != nil } ?? true
    }

    /// Puts `id` in line, if this engine runs it, for the next turn to start.
    mutating func line(_ id: DownloadID, key: QueueIndex.Key, hosts: HostPair) {
        guard runs(id) else { return }
        queue.insert(id, key: key, hosts: hosts)
        needsScheduling = true
    }

    /// The hosts of a download as the line keeps them: its URL's, and the one that answered its
    /// last attempt at the end of the redirects (`HostPair`).
    mutating func hostPair(of record: DownloadRecord) -> HostPair {
        hostPair(host: record.host, answered: record.answeredHostKey)
    }

    mutating func hostPair(host: String, answered: String?) -> HostPair {
        let first = hosts.id(host)
        guard let answered, answered != host else { return HostPair(first: first) }
        return HostPair(first: first, last: hosts.id(answered))
    }

    /// `record`'s download is gone: out of the line, its slot, its wait and its claims.
    mutating func forget(_ record: DownloadRecord) {
        let id = record.request.id
        releaseStartingSlot(id)
        if record.status == .queued { queue.remove(key: record.queueKey) }
        stopWaiting(id)
        claimed?[id] = nil
    }

    /// `claimant` wants `record`'s download; at the first claim it may run: queued, it joins the
    /// line (unless `held` for room); waiting to retry, it waits for its time.
    /// - Returns: whether the record must stay in memory (the waiting set reads its retry time).
    mutating func claim(_ record: DownloadRecord, by claimant: Int32, held: Bool) -> Bool {
        let id = record.request.id
        let first = claimed?[id] == nil
        claimed?[id, default: []].insert(claimant)
        guard first else { return false }
        switch record.status {
        case .queued:
            // One waiting for room stays held until its disk has it.
            if !held { line(id, key: record.queueKey, hosts: hostPair(of: record)) }
        case .waitingToRetry:
            wait(id, until: record.retryAt)
            return true
        case .downloading, .paused, .completed, .failed:
            break
        }
        return false
    }

    /// Claims `ids` for `claimant` before the restore adopts any row: each joins the line (or waits for
    /// its time) as its row is adopted, as a claim would make it, with no read of its row.
    mutating func claimAhead(_ ids: [DownloadID], by claimant: Int32) {
        guard claimed != nil else { return }
        claimed?.reserveCapacity(ids.count)
        claimedAhead.formUnion(ids)
        for id in ids { claimed?[id, default: []].insert(claimant) }
    }

    /// The restore ended. When it read every row (`readAll`), a claim made ahead whose row it never met (none
    /// such, or a completed one, which it does not read) goes, as a claim of an unknown download does, unless
    /// another claimant holds it; after a failed read the claims stay, for the rows it did not reach.
    mutating func restoreEnded(claimant: Int32, readAll: Bool) {
        if readAll { for id in claimedAhead where claimed?[id] == [claimant] { claimed?[id] = nil } }
        claimedAhead = []
    }

    /// `claimant` no longer wants the download; when nobody does (and no file of it is being
    /// placed), it leaves the line or its wait.
    /// - Returns: its status then (a running transfer is the core's to stop); nil: still wanted.
    mutating func release(_ id: DownloadID, by claimant: Int32, record: DownloadRecord?) -> DownloadStatus? {
        guard var claimants = claimed?[id], claimants.remove(claimant) != nil else { return nil }
        guard claimants.isEmpty else {
            claimed?[id] = claimants
            return nil
        }
        guard let record, !record.placing else { return nil }   // a file being placed lands
        claimed?[id] = nil
        if record.status == .queued { queue.remove(key: record.queueKey) }
        if record.status == .waitingToRetry { stopWaiting(id) }
        return record.status
    }

    /// The rows read ahead of their starts (`prefetchStarts`), in batches of at least half as many:
    /// twice the concurrency, and at least 64. While the disk worker is in a commit the transfers
    /// run on through the window, and each start past its end reads its own row.
    static func readAheadWindow(concurrency: Int) -> Int { max(64, 2 * concurrency) }

    /// Starts without a round trip to the disk worker: the rows of the next `window` downloads in
    /// line are read ahead (one with no file yet is planned on the loop: `SpaceGovernor.plannedStart`),
    /// so the rows of a queue of a hundred thousand stay on disk.
    mutating func prefetchStarts(window: Int, records: inout RecordTable, persistence: inout PersistenceGateway) {
        guard persistence.persistent, !persistence.restoring, !queue.isEmpty else { return }
        let (read, letGo) = rowsToReadAhead(window: window, isHot: { records.isHot($0) })
        for id in letGo { records.evictIfAtRest(id) }
        guard let ids = read else { return }
        persistence.onWorker({ store in
            // A failed read only means these start the usual way, reading their rows then.
            (try? store?.records(withIDs: ids, skippingUnreadable: { _ in })) ?? []
        }, then: { loop, rows in
            loop.scheduler.prefetching.subtract(ids)
            loop.scheduler.readAhead.formUnion(loop.records.adopt(rows))
        }, ifClosed: {})
    }

    /// Which rows of the first `window` downloads in line to read ahead of their start (marked
    /// `prefetching`; nil: too few to be worth a batch), and which rows read ahead to let go:
    /// those whose downloads left the window unstarted (a claim released, a host held, others put
    /// before them). A batch is at least half the window, or whatever of it is left to read.
    mutating func rowsToReadAhead(window: Int, isHot: (DownloadID) -> Bool) -> (read: [DownloadID]?, letGo: [DownloadID]) {
        var missing: [DownloadID] = []
        // A list, not a set: a window of some dozens of ids, looked through only to let rows go,
        // is cheaper than hashing each id at every turn that schedules.
        var inWindow: [DownloadID] = []
        inWindow.reserveCapacity(window)
        queue.forEach { entry in
            inWindow.append(entry.id)
            if !isHot(entry.id), !prefetching.contains(entry.id), starting[entry.id] == nil { missing.append(entry.id) }
            return inWindow.count < window
        }
        var letGo: [DownloadID] = []
        if readAhead.count > window {
            letGo = readAhead.filter { !inWindow.contains($0) && starting[$0] == nil }
            readAhead.subtract(letGo)
        }
        guard missing.count >= max(1, window / 2) || (!missing.isEmpty && inWindow.count < window) else { return (nil, letGo) }
        prefetching.formUnion(missing)
        return (missing, letGo)
    }
}
