import Foundation
import Testing
@testable import MonsoonEngine

/// What adding a batch decides: the checks before anything changes, and the rows numbered and
/// inserted in one transaction on a real queue database.
@Suite struct EnqueuingTests {
    private let url = URL(string: "http://127.0.0.1:9/a")!

    private func refusal(_ requests: [DownloadRequest], replacing: Bool = false, persistent: Bool = false,
                         known: Set<DownloadID> = [], owners: [String: DownloadID] = [:]) -> DownloadManagerError? {
        Enqueuing.refusal(of: requests, replacing: replacing, persistent: persistent, known: { known.contains($0) }, pathOwner: { owners[$0] })
    }

    @Test func aBatchIsCheckedWholeBeforeAnythingChanges() {
        let a = request("a", url, to: "/tmp/monsoon-enqueuing/a")
        let b = request("b", url, to: "/tmp/monsoon-enqueuing/b")
        #expect(refusal([a, b]) == nil)
        #expect(refusal([a, b], known: ["b"]) == .duplicate("b"), "an id taken already")
        #expect(refusal([a, a]) == .duplicate("a"), "an id twice in the batch")
        #expect(refusal([a], replacing: true, known: ["a"]) == nil, "replacing: a known id is the one replaced")
        let shared = request("c", url, to: "/tmp/monsoon-enqueuing/a")
        #expect(refusal([a, shared]) == .invalidRequest("c", "download a already writes to /tmp/monsoon-enqueuing/a"))
        #expect(refusal([b], owners: ["/tmp/monsoon-enqueuing/b": "z"]) == .invalidRequest("b", "download z already writes to /tmp/monsoon-enqueuing/b"))
        #expect(refusal([b], persistent: true, owners: ["/tmp/monsoon-enqueuing/b": "z"]) == nil,
                "with a store the rows say who writes where, checked in the inserting transaction")
        let ftp = request("f", URL(string: "ftp://127.0.0.1/a")!, to: "/tmp/monsoon-enqueuing/f")
        #expect(refusal([ftp])?.code == .invalidRequest, "another scheme than http(s) is refused")
        let discard = DownloadRequest(id: "d", url: url, destination: .discard(checksum: false))
        #expect(refusal([discard]) == nil)
        #expect(refusal([discard], persistent: true)?.code == .invalidRequest, "a download that writes nothing is not kept in a queue")
    }

    @Test func rowsAreNumberedAndInsertedInOneTransaction() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let store = try DownloadStore(path: folder.file("queue.sqlite"))
        let first = try Enqueuing.insert([request("d1", url, to: folder.file("taken"))], into: store, replacing: [], adoptingAfter: 0).get()
        // An automatic id takes the next number free: `d1` is an explicit id already.
        let automatic = DownloadRequest(id: "", url: url, destination: .file(folder.file("x")))
        let written = try Enqueuing.insert([automatic], into: store, replacing: [], adoptingAfter: first.records[0].sequence).get()
        #expect(written.records.count == 1 && written.records[0].request.id != "d1")
        #expect(written.records[0].request.id == DownloadID("d\(written.records[0].sequence)"))
        #expect(try store.record(withID: written.records[0].request.id) != nil)
        // A path another row writes to refuses the whole batch: nothing of it is inserted.
        let clash = try #require(Enqueuing.insert([request("n", url, to: folder.file("new")), request("m", url, to: folder.file("taken"))],
                                                  into: store, replacing: [], adoptingAfter: 0).failure)
        #expect(clash == .invalidRequest("m", "download d1 already writes to \(folder.file("taken"))"))
        #expect(try store.record(withID: "n") == nil)
        // Replacing: the old row goes in the same transaction that adds the new one.
        let again = try Enqueuing.insert([request("d1", url, to: folder.file("taken"))], into: store,
                                         replacing: [("d1", first.records[0].sequence)], adoptingAfter: written.records[0].sequence).get()
        #expect(try store.record(withID: "d1")?.sequence == again.records[0].sequence)
    }

    @Test func aPartOnDiskIsCountedAsTheBytesItHolds() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        try Data(count: 300).write(to: URL(fileURLWithPath: PartFile.path(for: folder.file("a"))))
        let written = try Enqueuing.insert([request("a", url, to: folder.file("a"))], into: nil, replacing: [], adoptingAfter: 0).get()
        #expect(written.records[0].bytes == 300 && written.records[0].filePath == folder.file("a") && written.records[0].host == "127.0.0.1:9")
    }

    @Test func aRequestForADownloadBeingPlacedWaitsForItAndAnotherReplacesTheOneItNames() {
        var records = RecordTable(persistent: false)
        func make(_ id: DownloadID) -> DownloadRequest { request(id, URL(string: "http://127.0.0.1:9/\(id)")!, to: "/tmp/\(id)") }
        for id: DownloadID in ["placing", "old"] { _ = records.add(DownloadRecord(request: make(id), sequence: 0, host: "127.0.0.1:9")) }
        records.update("placing") { record in
            for event: DownloadRecord.StateMachine.Event in [.lifecycle(.start), .attemptEnded, .placeStarted] { _ = record.handle(event) }
        }
        let plan = Enqueuing.plan([make("placing"), make("old"), make("")], records: &records)
        #expect(plan.answers == ["placing", nil, nil], "the one being placed answers with its id; the others with their rows'")
        #expect(plan.inserts.map(\.id) == ["old", ""] && plan.replaced.map(\.request.id) == ["old"] && plan.refused.isEmpty)
        #expect(records.hot["placing"]?.placing == true, "replaced once its file lands")
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
