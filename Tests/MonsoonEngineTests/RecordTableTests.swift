import Foundation
import Testing
@testable import MonsoonEngine

/// Which records stay in memory with a store: rows kept waiting (inserted, read ahead), and
/// records a command batch counts on while the rest of its rows are read.
@Suite struct RecordTableTests {
    private func row(_ id: DownloadID, sequence: Int) -> DownloadRecord {
        DownloadRecord(request: request(id, URL(string: "http://127.0.0.1:9/\(id)")!, to: "/tmp/\(id)"), sequence: sequence, host: "127.0.0.1:9")
    }

    @Test func insertedRowsAreKeptUpToTheLimitUntilTheyStart() {
        var table = RecordTable(persistent: true)
        table.keepFresh((1...3).map { row(DownloadID("d\($0)"), sequence: $0) }, limit: 2)
        #expect(table.hot["d1"] != nil && table.hot["d2"] != nil && table.hot["d3"] == nil)
        table.keepFresh([row("d4", sequence: 4)], limit: 2)
        #expect(table.hot["d4"] == nil, "two are waiting: no room")
        table.started("d1")
        table.keepFresh([row("d4", sequence: 4)], limit: 2)
        #expect(table.hot["d4"] != nil, "one started: room for one")
        // One that changes is saved and let go as any other, and makes room.
        table.saving("d2")
        table.saved(["d2"])
        #expect(table.hot["d2"] == nil)
        table.keepFresh([row("d5", sequence: 5)], limit: 2)
        #expect(table.hot["d5"] != nil)
    }

    /// A download saved queued (retried, resumed) that this engine runs stays in memory, as an
    /// inserted row does and within the same limit: its start would read its row straight back.
    @Test func aRecordSavedQueuedStaysWhenThisEngineRunsItWithinTheLimit() {
        var table = RecordTable(persistent: true)
        let ids = (1...(RecordTable.freshLimit + 3)).map { DownloadID("r\($0)") }
        _ = table.adopt(ids.enumerated().map { row($1, sequence: $0 + 1) })   // in memory, at rest
        table.update("r2") { $0.restoreStatus(.paused) }
        for id in ids { table.saving(id) }
        table.saved(ids) { $0 != "r3" }
        #expect(table.hot["r1"] != nil, "queued, and run here: kept")
        #expect(table.hot["r2"] == nil, "paused: let go")
        #expect(table.hot["r3"] == nil, "not run here (another's claim): let go")
        #expect(table.hot.count == RecordTable.freshLimit, "no more than the inserted rows kept")
        // Kept as an inserted row is: it counts toward the limit until it starts.
        table.keepFresh([row("new", sequence: 9_999)])
        #expect(table.hot["new"] == nil, "the limit is reached")
        table.started("r1")
        table.keepFresh([row("new", sequence: 9_999)])
        #expect(table.hot["new"] != nil, "one started: room for one")
        // Without a word on who runs it, a save lets a record at rest go, as before.
        table.saving("r4")
        table.saved(["r4"])
        #expect(table.hot["r4"] == nil)
    }

    @Test func withoutAStoreDownloadsAreNumberedHereAndAnAutomaticIdIsTheFirstFree() {
        var table = RecordTable(persistent: false)
        table.numbered(through: 4)   // as a restore would say
        let explicit = table.add(row("d5", sequence: 0))
        let automatic = table.add(row("", sequence: 0))
        _ = table.add(row("d9", sequence: 0))
        let ids = [table.add(row("", sequence: 0)), table.add(row("", sequence: 0))].map(\.request.id)
        #expect(explicit.sequence == 5 && table.hot["d5"] != nil)
        #expect(automatic.request.id == "d6" && automatic.sequence == 6)
        #expect(ids == ["d8", "d10"], "d9 is an explicit id already: the next number free")
        // With a store, the store numbered it: the table only goes on past it, and keeps nothing.
        var stored = RecordTable(persistent: true)
        let numbered = stored.add(row("x", sequence: 41))
        #expect(numbered.sequence == 41 && stored.hot.isEmpty)
    }

    @Test func answersWithoutAStoreComeFromMemoryAndRowsReadAreOverlaidWithBusyRecords() {
        var table = RecordTable(persistent: false)
        let b = table.add(row("b", sequence: 0))
        _ = table.add(row("a", sequence: 0))
        table.update("a") { $0.restoreStatus(.paused) }
        #expect(table.snapshots.map(\.request.id) == ["b", "a"], "in enqueue order")
        #expect(table.counts == [.queued: 1, .paused: 1])
        #expect(table.downloads(of: [b.request.url, URL(string: "http://127.0.0.1:9/none")!]).map { $0.map(\.request.id) } == [["b"], []])
        let stale = row("a", sequence: 1).snapshot()
        #expect(table.current([stale]).map(\.status) == [.paused], "the record in memory is newer than its row")
        #expect(table.current([[row("a", sequence: 1), row("z", sequence: 9)]]).map { $0.map(\.status) } == [[.paused, .queued]])
    }

    @Test func aPinnedRecordGoesOnlyWhenUnpinnedAndOnlyIfItWasDueToGo() {
        var table = RecordTable(persistent: true)
        table.keepFresh([row("a", sequence: 1), row("b", sequence: 2)], limit: 10)
        table.pin("a")
        table.pin("b")
        // a's save is confirmed while a command batch counts on it: it stays until unpinned.
        table.saving("a")
        table.saved(["a"])
        #expect(table.hot["a"] != nil)
        table.unpin("a")
        #expect(table.hot["a"] == nil)
        // b was only waiting: it waits on after the batch.
        table.unpin("b")
        #expect(table.hot["b"] != nil)
    }

    @Test func aMoveChangesTheRecordWhereItLiesAndSaysWhatChanged() {
        var table = RecordTable(persistent: false)
        _ = table.add(row("a", sequence: 0))
        table.update("a") { $0.lastError = DownloadError(.notEnoughDiskSpace, "no room") }
        let holding = table.move("a", .holdForSpace)
        guard case .success(let held)? = holding else { Issue.record("a queued download may wait for room"); return }
        #expect(held.old == .queued && held.new == .queued && table.hot["a"]?.lastError != nil, "a hold keeps saying why")
        let starting = table.move("a", .start)
        guard case .success(let started)? = starting else { Issue.record("a queued download starts"); return }
        #expect(started.old == .queued && started.new == .downloading && started.host == "127.0.0.1:9")
        #expect(table.hot["a"]?.lastError == nil, "started: no longer waiting for room")
        let again = table.move("a", .start)
        guard case .failure(let refusal)? = again, case .refuse = refusal.action else { Issue.record("started twice: refused"); return }
        #expect(table.hot["a"]?.status == .downloading, "a refusal changes nothing")
        let none = table.move("none", .start)
        #expect(none == nil)
    }

    @Test func aPartsNameSticksAndIsSavedAgainOnlyWhenTheWorkersSaveMayNotCarryIt() {
        var table = RecordTable(persistent: true)
        table.keepFresh([row("a", sequence: 1)], limit: 10)
        table.update("a") { $0.filePath = nil }
        var naming = table.named("a", sequence: 1, path: "/tmp/a", saved: true, stopped: false)
        #expect(naming == .kept, "the worker saved it with the name")
        #expect(table.hot["a"]?.filePath == "/tmp/a")
        naming = table.named("a", sequence: 1, path: "/tmp/b", saved: false, stopped: false)
        #expect(naming == .save, "its save failed")
        table.saving("a")
        naming = table.named("a", sequence: 1, path: "/tmp/c", saved: true, stopped: false)
        #expect(naming == .save, "a save in flight would write it without")
        naming = table.named("a", sequence: 1, path: "/tmp/c", saved: false, stopped: false)
        #expect(naming == .kept, "the same name: nothing to save")
        naming = table.named("a", sequence: 2, path: "/tmp/d", saved: true, stopped: false)
        #expect(naming == .kept, "another row's answer")
        naming = table.named("gone", sequence: 1, path: "/tmp/e", saved: true, stopped: true)
        #expect(naming == .orphan(root: nil))
    }

    @Test func aCheckpointMovesOnlyForwardOnTheSamePartAndWithinWhatWasWritten() {
        var table = RecordTable(persistent: false)
        _ = table.add(row("a", sequence: 0))
        let epoch = table.restartPart("a", epoch: 7)?.partEpoch
        #expect(epoch == 7 && table.hot["a"]?.bytes == 0)
        let taken = table.checkpointFlushed("a", epoch: 7, length: 100, limit: 200)
        let back = table.checkpointFlushed("a", epoch: 7, length: 50)
        let earlierPart = table.checkpointFlushed("a", epoch: 6, length: 150)
        let pastWritten = table.checkpointFlushed("a", epoch: 7, length: 300, limit: 200)
        #expect(taken && !back && !earlierPart && !pastWritten, "only forward, on the same part, within what the attempt wrote")
        #expect(table.hot["a"]?.checkpoint == 100)
    }
}
