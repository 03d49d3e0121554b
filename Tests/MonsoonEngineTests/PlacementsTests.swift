import Foundation
import Testing
@testable import MonsoonEngine

/// The finished files of a turn go to the placer as one batch, and a file's WARC records are
/// handed over once: not again after a placement that wrote them and did not land.
@Suite struct PlacementsTests {
    private func placement(_ name: String) -> Placement {
        Placement(fd: -1, partPath: "/d/\(name).part", destination: "/d/\(name)", lastModified: nil, root: nil)
    }

    @Test func aTurnsFinishedFilesGoAsOneBatchInOrder() {
        var placements = Placements(archive: nil)
        #expect(placements.take() == nil, "nothing finished: no batch")
        placements.append("a", placement("a"))
        placements.append("b", placement("b"))
        #expect(placements.take()?.map(\.1.destination) == ["/d/a", "/d/b"])
        #expect(placements.take() == nil, "taken once")
    }

    @Test func aFinishedPartJoinsTheBatchWithItsDescriptor() {
        var placements = Placements(archive: nil)
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        let transfer = Transfer(purpose: .download("a"), plan: AttemptPlan(offset: 0, ifRange: nil), handles: table.easyHandles)
        transfer.part.fd = 9
        transfer.head.lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
        var record = DownloadRecord(request: DownloadRequest(id: "a", url: URL(string: "http://x/a")!, destination: .directory("/d")), sequence: 1, host: "x")
        record.filePath = "/d/a.mp3"
        placements.place(record, transfer)
        #expect(transfer.part.fd == -1, "the placer's now")
        let batch = placements.take()
        #expect(batch?.count == 1 && batch?.first?.0 == "a")
        #expect(batch?.first?.1.fd == 9 && batch?.first?.1.partPath == "/d/a.mp3.part" && batch?.first?.1.destination == "/d/a.mp3")
        #expect(batch?.first?.1.lastModified == HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"))
        // No file name: nothing to place.
        record.filePath = nil
        placements.place(record, transfer)
        #expect(placements.take() == nil)
    }

    @Test func wholeFilesWrittenGiveTheirBuffersBackAndNameTheirFiles() throws {
        let placements = Placements(archive: nil)
        var records = RecordTable(persistent: false)
        let space = SpaceGovernor(inbox: EngineInbox(), reserve: 0)
        for id: DownloadID in ["a", "b"] {
            var record = DownloadRecord(request: DownloadRequest(id: id, url: URL(string: "http://x/\(id)")!, destination: .directory("/d")), sequence: 1, host: "x")
            record.restoreStatus(.downloading)
            _ = record.handle(.placeStarted)
            (record.bytes, record.highWater) = (10, 10)
            records[id] = record
        }
        let available = space.earlyBudget.available
        func answer(_ id: DownloadID, sequence: Int = 1, _ result: Result<Void, DownloadError>) throws -> WholeFile.Answer {
            WholeFile.Answer(id: id, sequence: sequence, path: "/d/\(id).mp3", result: result, rowSaved: true, transient: false, volume: nil,
                             body: WholeFile.Body(buffer: try #require(space.earlyBudget.take(10)), count: 10))
        }
        // a written, b not, c no longer known, and an earlier attempt's answer for a.
        let answers = [try answer("a", .success(())), try answer("b", .failure(DownloadError(.fileSystem, "no"))),
                       try answer("c", .success(())), try answer("a", sequence: 0, .success(()))]
        let landed = placements.wholesWritten(answers, records: &records, space: space, persistent: false)
        #expect(landed.map(\.id) == ["a", "b"] && landed.allSatisfy(\.saved))
        #expect(space.earlyBudget.available == available, "every buffer back")
        #expect(records["a"]?.filePath == "/d/a.mp3" && records["a"]?.bytes == 10)
        #expect(records["b"]?.bytes == 0 && records["b"]?.highWater == 0, "no part holds what was not written")
    }

    @Test func withoutAWARCNothingIsKeptForTheArchive() {
        var placements = Placements(archive: nil)
        #expect(placements.payload("a", url: "http://x/a", partPath: "/d/a.part") == nil)
        placements.written(["a"])
        #expect(placements.captures.isEmpty)
    }

    @Test func aFilesRecordsAreWrittenOnceWhateverBecomesOfItsPlacement() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var placements = Placements(archive: try WARCArchive.open(WARCArchiveTests.configuration(folder.file("cap.warc.gz"))))
        let payload = try #require(placements.payload("a", url: "http://x/a", partPath: "/d/a.part"))
        #expect(payload.url == "http://x/a" && payload.path == "/d/a.part")
        // The placer wrote its records, then the rename failed: the next placement writes none.
        placements.written(["a"])
        #expect(placements.recorded == ["a"] && placements.payload("a", url: "http://x/a", partPath: "/d/a.part") == nil)
        // Landed (or given up on): the next file of that id is recorded again.
        placements.landed("a")
        #expect(placements.recorded.isEmpty && placements.payload("a", url: "http://x/a", partPath: "/d/a.part") != nil)
        placements.written(["b"])
        placements.abandon("b")
        #expect(placements.recorded.isEmpty)
    }
}
