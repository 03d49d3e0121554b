import MonsoonEngine
import Testing
@testable import MonsoonCLI

/// What the control messages say about many downloads.
@Suite struct ControlMessageTests {
    @Test func aLongListOfIdsIsShortened() {
        let ids = (1...8_000).map { DownloadID("d\($0)") }
        #expect(Control.mention(Array(ids.prefix(3))) == "d1, d2, d3")
        #expect(Control.mention(Array(ids.prefix(8))) == "d1, d2, d3, d4, d5, d6, d7, d8")
        #expect(Control.mention(ids) == "d1, d2, d3, … d7999, d8000 (8000 in all)")
    }
}
