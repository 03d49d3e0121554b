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
