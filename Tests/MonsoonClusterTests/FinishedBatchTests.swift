import Testing
@testable import MonsoonCluster

/// When a worker records its finished downloads: at once when nothing it holds is still under way (a claim's last
/// download done, no later finish could join the batch), or at 50; otherwise at the batch's 20 ms deadline.
@Suite struct FinishedBatchTests {
    @Test func aBatchIsRecordedAtOnceWhenNothingElseIsUnderWayOrAt50() {
        #expect(FinishedBatch.recordsNow(finished: 1, underWay: 0))
        #expect(FinishedBatch.recordsNow(finished: 16, underWay: 0))
        #expect(!FinishedBatch.recordsNow(finished: 1, underWay: 15))
        #expect(!FinishedBatch.recordsNow(finished: 49, underWay: 15))
        #expect(FinishedBatch.recordsNow(finished: 50, underWay: 14))
    }
}
