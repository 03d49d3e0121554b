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
