import Foundation
import Testing
@testable import MonsoonEngine

/// The scheduler's timers: retries come due in order, a hold's end lets its host's downloads
/// start, and a download that leaves the waiting set leaves no timer behind to wake the loop.
@Suite struct DownloadSchedulerTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let policy = Scheduler(maxConcurrent: 4, maxPerHost: nil)

    @Test func retriesComeDueInTheOrderOfTheirTimes() {
        var scheduler = DownloadScheduler()
        scheduler.wait("c", until: now + 3)
        scheduler.wait("a", until: now + 1)
        scheduler.wait("b", until: now + 2)
        #expect(scheduler.nextDeadline == now + 1)
        #expect(scheduler.takeDue(now: now + 0.5).isEmpty)
        #expect(scheduler.takeDue(now: now + 2) == ["a", "b"])
        #expect(scheduler.waiting == ["c"])
        #expect(scheduler.nextDeadline == now + 3)
        // A new time for the same download replaces its old one.
        scheduler.wait("c", until: now + 10)
        #expect(scheduler.takeDue(now: now + 5).isEmpty)
        #expect(scheduler.takeDue(now: now + 10) == ["c"])
        #expect(scheduler.waiting.isEmpty && scheduler.nextDeadline == nil)
    }

    @Test func theEndOfAHostsHoldMakesItsDownloadsSchedulable() {
        var scheduler = DownloadScheduler()
        scheduler.queue.insert("held", key: QueueIndex.Key(priority: 0, sequence: 0), hosts: HostPair(first: 0))
        scheduler.queue.insert("other", key: QueueIndex.Key(priority: 0, sequence: 1), hosts: HostPair(first: 1))
        let hold = scheduler.record(status: 429, download: "earlier", hosts: HostPair(first: 0), retryAt: now + 5, namesWindow: true, now: now)
        #expect(hold?.until == now + 5)
        #expect(scheduler.select(policy, now: now + 1).map(\.id) == ["other"])
        scheduler.needsScheduling = false
        #expect(scheduler.nextDeadline == now + 5, "the poll wakes when the hold ends")
        #expect(scheduler.takeDue(now: now + 4.9).isEmpty && !scheduler.needsScheduling)
        #expect(scheduler.takeDue(now: now + 5).isEmpty, "a hold's end is no retry")
        #expect(scheduler.needsScheduling)
        #expect(scheduler.select(policy, now: now + 5).map(\.id) == ["held", "other"])
        #expect(scheduler.nextDeadline == nil)
    }

    @Test func aLongerHoldMovesItsEndAndAnEmptyLineAsksForNoScheduling() {
        var scheduler = DownloadScheduler()
        scheduler.hold(HostPair(first: 0, last: 1), until: now + 2)
        scheduler.hold(HostPair(first: 1), until: now + 6)
        scheduler.needsScheduling = false
        #expect(scheduler.takeDue(now: now + 2).isEmpty)
        #expect(scheduler.hostHolds.until[0] == nil && scheduler.hostHolds.until[1] == now + 6)
        #expect(scheduler.nextDeadline == now + 6)
        // Nothing queued: nothing for the hold's end to start.
        #expect(scheduler.takeDue(now: now + 6).isEmpty && !scheduler.needsScheduling)
    }

    /// Retried now, paused, removed or released: the download leaves the waiting set, and its
    /// timer with it, so the poll never wakes for it and it never comes due.
    @Test func aRetryThatMovesCancelsItsTimer() {
        var scheduler = DownloadScheduler()
        scheduler.wait("retriedNow", until: now + 1)
        scheduler.wait("paused", until: now + 2)
        scheduler.wait("removed", until: now + 3)
        scheduler.wait("stays", until: now + 4)
        scheduler.stopWaiting("retriedNow")
        scheduler.stopWaiting("paused")
        scheduler.stopWaiting("removed")
        #expect(scheduler.waiting == ["stays"])
        #expect(scheduler.nextDeadline == now + 4, "no stale wake-up")
        #expect(scheduler.takeDue(now: now + 3.5).isEmpty)
        // Waiting again without a time: it waits until something moves it, with no timer.
        scheduler.wait("stays", until: nil)
        #expect(scheduler.nextDeadline == nil && scheduler.waiting == ["stays"])
        #expect(scheduler.takeDue(now: .distantFuture).isEmpty)
    }

    @Test func aLiftedHoldCancelsItsEnd() {
        var scheduler = DownloadScheduler()
        scheduler.queue.insert("a", key: QueueIndex.Key(priority: 0, sequence: 0), hosts: HostPair(first: 0, last: 1))
        scheduler.hold(HostPair(first: 0, last: 1), until: now + 5)
        #expect(scheduler.select(policy, now: now).isEmpty)
        scheduler.lift(HostPair(first: 0, last: 1))
        #expect(scheduler.nextDeadline == nil)
        #expect(scheduler.select(policy, now: now).map(\.id) == ["a"])
    }

    private func record(_ id: DownloadID, _ status: DownloadStatus, sequence: Int, retryAt: Date? = nil) -> DownloadRecord {
        var record = DownloadRecord(request: request(id, URL(string: "http://a.example/\(id)")!, to: "/tmp/\(id)"), sequence: sequence, host: "a.example")
        record.restoreStatus(status)
        record.retryAt = retryAt
        return record
    }

    @Test func aClaimLetsADownloadRunUntilTheLastClaimantReleasesIt() {
        var scheduler = DownloadScheduler(claimedOnly: true)
        let queued = record("q", .queued, sequence: 1)
        let kept = [scheduler.claim(queued, by: 7, held: false), scheduler.claim(queued, by: 8, held: false)]
        #expect(kept == [false, false])
        #expect(scheduler.queue.entries.map(\.id) == ["q"] && scheduler.needsScheduling, "in line once, for two claimants")
        let retrying = record("r", .waitingToRetry, sequence: 2, retryAt: now.addingTimeInterval(5))
        let keptRetrying = scheduler.claim(retrying, by: 7, held: false)
        #expect(keptRetrying, "its retry time is read from memory: the record stays")
        #expect(scheduler.waiting == ["r"] && scheduler.nextDeadline == now.addingTimeInterval(5))
        _ = scheduler.claim(record("h", .queued, sequence: 3), by: 7, held: true)
        #expect(scheduler.queue.count == 1 && scheduler.runs("h"), "held for room: claimed, but not in line")

        let released = [scheduler.release("q", by: 7, record: queued), scheduler.release("q", by: 9, record: queued)]
        #expect(released == [nil, nil], "8 still wants it; 9 never claimed it")
        let last = scheduler.release("q", by: 8, record: queued)
        #expect(last == .queued && scheduler.queue.isEmpty && !scheduler.runs("q"))
        let retryReleased = scheduler.release("r", by: 7, record: retrying)
        #expect(retryReleased == .waitingToRetry && scheduler.waiting.isEmpty && scheduler.nextDeadline == nil)
        // A download removed: out of the line, its wait and its claims.
        let again = scheduler.claim(retrying, by: 7, held: false)
        scheduler.forget(retrying)
        #expect(again && scheduler.waiting.isEmpty && scheduler.nextDeadline == nil && !scheduler.runs("r"))
    }

    /// Claims made as the engine opens line rows up as the restore adopts them; once it read every row, those
    /// it never met go (another claimant's stays), and after a failed read they all stay, for the rows it missed.
    @Test func claimsMadeAheadOfTheRestoreLineItsRowsUpAndTheUnmetGoWhenItReadEveryRow() {
        for readAll in [true, false] {
            var scheduler = DownloadScheduler(claimedOnly: true)
            scheduler.claimAhead(["met", "unmet", "shared"], by: EngineCore.ownClaim)
            scheduler.claimed?["shared", default: []].insert(7)
            scheduler.adopt(record("met", .queued, sequence: 1))
            #expect(scheduler.queue.entries.map(\.id) == ["met"])
            scheduler.restoreEnded(claimant: EngineCore.ownClaim, readAll: readAll)
            #expect(scheduler.runs("met") && scheduler.runs("shared") && scheduler.runs("unmet") == !readAll, "read all: \(readAll)")
            #expect(scheduler.claimedAhead.isEmpty)
        }
    }

    @Test func aDownloadIsLinedUnderItsHostsOnlyWhenThisEngineRunsIt() {
        var scheduler = DownloadScheduler(claimedOnly: true)
        var redirected = record("a", .queued, sequence: 1)
        redirected.finalURL = "https://CDN.example:8443/a"
        let hosts = scheduler.hostPair(of: redirected)
        let named = scheduler.hostPair(host: "a.example", answered: "cdn.example:8443")
        let same = scheduler.hostPair(host: "a.example", answered: "a.example")
        #expect(hosts.each.count == 2 && hosts == named && same.each.count == 1)
        scheduler.needsScheduling = false
        scheduler.line("a", key: redirected.queueKey, hosts: hosts)
        #expect(scheduler.queue.isEmpty && !scheduler.needsScheduling, "not claimed: not this engine's to start")
        scheduler.claimed?["a"] = [EngineCore.ownClaim]
        scheduler.line("a", key: redirected.queueKey, hosts: hosts)
        #expect(scheduler.queue.entries.map(\.id) == ["a"] && scheduler.needsScheduling)
    }

    @Test func claimedOnlyRunsWhatIsClaimed() {
        var scheduler = DownloadScheduler(claimedOnly: true)
        #expect(!scheduler.runs("a"))
        scheduler.claimed?["a", default: []].insert(EngineCore.ownClaim)
        #expect(scheduler.runs("a") && !scheduler.runs("b"))
        #expect(DownloadScheduler().runs("b"))
    }
}

/// The slots: a download chosen to start takes one on each of its hosts until it gives it back.
@Suite struct DownloadSchedulerSlotTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func aChosenDownloadTakesASlotOnEachHostUntilItGivesItBack() {
        var scheduler = DownloadScheduler()
        let policy = Scheduler(maxConcurrent: 4, maxPerHost: 1)
        scheduler.queue.insert("a", key: QueueIndex.Key(priority: 0, sequence: 0), hosts: HostPair(first: 0, last: 1))
        scheduler.queue.insert("b", key: QueueIndex.Key(priority: 0, sequence: 1), hosts: HostPair(first: 1))
        let chosen = scheduler.select(policy, now: now)
        #expect(chosen.map(\.id) == ["a"], "b shares a's second host, at its limit")
        scheduler.needsScheduling = false
        for entry in chosen { scheduler.take(entry) }
        #expect(scheduler.runningDownloads == 1 && scheduler.runningPerHost == [0: 1, 1: 1])
        #expect(scheduler.queue.count == 1 && scheduler.starting["a"] != nil)
        #expect(scheduler.select(policy, now: now).isEmpty)
        // Attempts that ended while their parts are prepared hold back starts past as many as there are slots (1 + 7 - 4 busy of 4).
        #expect(scheduler.select(Scheduler(maxConcurrent: 4, maxPerHost: nil), endedAwaitingParts: 7, now: now).isEmpty)
        #expect(scheduler.select(Scheduler(maxConcurrent: 4, maxPerHost: nil), endedAwaitingParts: 6, now: now).map(\.id) == ["b"])
        scheduler.releaseStartingSlot("a")
        scheduler.releaseStartingSlot("a")   // a second time: it holds none
        #expect(scheduler.runningDownloads == 0 && scheduler.runningPerHost.isEmpty && scheduler.needsScheduling)
        #expect(scheduler.select(policy, now: now).map(\.id) == ["b"])
    }

    @Test func rowsAreReadAheadInBatchesWithinTheWindowAndLetGoOnceOutOfIt() {
        var scheduler = DownloadScheduler()
        let line: [DownloadID] = ["a", "b", "c", "d", "e", "f"]
        for (index, id) in line.enumerated() {
            scheduler.queue.insert(id, key: QueueIndex.Key(priority: 0, sequence: index), hosts: HostPair(first: 0))
        }
        // A window of 4 with "a" in memory already: 3 missing, at least half the window, are read.
        let first = scheduler.rowsToReadAhead(window: 4, isHot: { $0 == "a" })
        #expect(first.read == ["b", "c", "d"] && first.letGo.isEmpty)
        #expect(scheduler.prefetching == ["b", "c", "d"])
        // Being read already: not asked again.
        #expect(scheduler.rowsToReadAhead(window: 4, isHot: { $0 == "a" }).read == nil)
        // Rows that came, then left the window unstarted (others put before them), are let go.
        scheduler.prefetching.removeAll()
        scheduler.readAhead = ["b", "c", "d", "x", "y"]
        for sequence in 1...3 { scheduler.queue.remove(key: QueueIndex.Key(priority: 0, sequence: sequence)) }
        let later = scheduler.rowsToReadAhead(window: 4, isHot: { _ in false })
        #expect(Set(later.letGo) == ["b", "c", "d", "x", "y"])
        #expect(scheduler.readAhead.isEmpty)
        // What is left of the line is fewer than the window: it is read whatever its size.
        #expect(later.read == ["a", "e", "f"])
    }

    @Test func aStatusChangeMovesTheDownloadBetweenTheLineAndItsWait() {
        var scheduler = DownloadScheduler()
        let key = QueueIndex.Key(priority: 0, sequence: 1)
        func change(_ old: DownloadStatus, _ new: DownloadStatus, retryAt: Date? = nil) -> StatusChange {
            StatusChange(old: old, new: new, key: key, host: "h", answered: nil, retryAt: retryAt)
        }
        scheduler.moved("a", change(.paused, .queued), held: true)
        #expect(scheduler.queue.isEmpty, "waiting for room: out of line")
        scheduler.moved("a", change(.paused, .queued), held: false)
        #expect(scheduler.queue.entries.map(\.id) == ["a"] && scheduler.needsScheduling)
        scheduler.moved("a", change(.queued, .waitingToRetry, retryAt: now + 5), held: false)
        #expect(scheduler.queue.isEmpty && scheduler.waiting == ["a"] && scheduler.nextDeadline == now + 5)
        scheduler.moved("a", change(.waitingToRetry, .failed), held: false)
        #expect(scheduler.waiting.isEmpty && scheduler.nextDeadline == nil)
        var claimed = DownloadScheduler(claimedOnly: true)
        claimed.moved("b", change(.paused, .queued), held: false)
        #expect(claimed.queue.isEmpty, "not claimed here: another engine runs it")
    }

    @Test func aStartWhoseRowCouldNotBeReadGivesItsSlotBackAndHoldsItsHostASecond() throws {
        var scheduler = DownloadScheduler()
        scheduler.queue.insert("a", key: QueueIndex.Key(priority: 0, sequence: 0), hosts: HostPair(first: 0))
        let policy = Scheduler(maxConcurrent: 4, maxPerHost: nil)
        let entry = try #require(scheduler.select(policy, now: now).first)
        scheduler.take(entry)
        #expect(scheduler.runningDownloads == 1 && scheduler.queue.isEmpty)
        scheduler.startFailed("a", requeue: true, now: now)
        #expect(scheduler.runningDownloads == 0 && scheduler.starting.isEmpty && scheduler.queue.entries.map(\.id) == ["a"])
        #expect(scheduler.select(policy, now: now + 0.5).isEmpty && scheduler.select(policy, now: now + 1).map(\.id) == ["a"])
        scheduler.take(entry)
        scheduler.startFailed("a", requeue: false, now: now)
        #expect(scheduler.runningDownloads == 0 && scheduler.queue.isEmpty, "paused meanwhile: not back in line")
    }

    @Test func aHostHoldIsNamedInTheErrorOfTheDownloadThatCausedIt() {
        var scheduler = DownloadScheduler()
        let text = scheduler.holdHosts(status: 429, of: "a", host: "a.example", answered: nil, retryAt: now + 30, namesWindow: true, now: now)
        #expect(text?.contains("a.example") == true && scheduler.needsScheduling)
        scheduler.needsScheduling = false
        #expect(scheduler.holdHosts(status: 500, of: "b", host: "b.example", answered: nil, retryAt: now + 30, namesWindow: false, now: now) == nil)
        #expect(!scheduler.needsScheduling)
    }

    @Test func aDownloadRelinedMovesToItsNewPlaceUnderItsNewHosts() {
        var scheduler = DownloadScheduler()
        func record(_ id: DownloadID, priority: Int, host: String) -> DownloadRecord {
            DownloadRecord(request: request(id, URL(string: "http://\(host)/\(id)")!, to: "/tmp/\(id)", priority: priority), sequence: 1, host: host)
        }
        let first = record("a", priority: 0, host: "old.example")
        scheduler.line("a", key: first.queueKey, hosts: scheduler.hostPair(of: first))
        scheduler.line("b", key: QueueIndex.Key(priority: 5, sequence: 2), hosts: HostPair(first: scheduler.hosts.id("other.example")))
        let moved = record("a", priority: 10, host: "new.example")
        scheduler.reline("a", from: first, to: moved)
        #expect(scheduler.queue.entries.map(\.id) == ["a", "b"] && scheduler.queue.count == 2, "first now, and once")
        #expect(scheduler.queue.entries.first?.hosts.first == scheduler.hosts.id("new.example"))
    }
}
