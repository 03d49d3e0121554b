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
}
