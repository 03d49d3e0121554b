import Testing
@testable import MonsoonEngine

/// The space decisions without a disk.
@Suite struct SpacePolicyTests {
    @Test func theAllowanceIsFreeSpaceLessTheReserveLessWhatWasWrittenSinceTheRequest() {
        #expect(SpacePolicy.allowance(free: 100, reserve: 30, writtenSinceRequest: 0) == 70)
        #expect(SpacePolicy.allowance(free: 100, reserve: 30, writtenSinceRequest: 20) == 50)
        #expect(SpacePolicy.allowance(free: 10, reserve: 30, writtenSinceRequest: 0) == -20, "something else ate into the reserve")
    }

    @Test func aDownloadFitsBesideWhatTheRunningOnesStillNeed() {
        #expect(SpacePolicy.fits(needed: 40, allowance: 100, committed: 60))
        #expect(!SpacePolicy.fits(needed: 41, allowance: 100, committed: 60))
        #expect(SpacePolicy.fits(needed: 0, allowance: 0, committed: 0))
        #expect(!SpacePolicy.fits(needed: 0, allowance: -1, committed: 0), "past the reserve already: nothing starts")
    }

    @Test func theNeedOfAnUnknownSizeIsAGap() {
        #expect(SpacePolicy.need(expected: 100, have: 30) == 70)
        #expect(SpacePolicy.need(expected: 100, have: 130) == 0)
        #expect(SpacePolicy.need(expected: nil, have: 30) == SpacePolicy.unknownSizeNeed)
    }

    @Test func heldDownloadsGoInQueueOrderAndASmallerLaterOneMayStillFit() {
        let holds = [(id: "a", needed: 50), (id: "b", needed: 40), (id: "c", needed: 10), (id: "d", needed: 5)]
        #expect(SpacePolicy.releasable(holds, allowance: 100, committed: 40) == ["a", "c"])
        #expect(SpacePolicy.releasable(holds, allowance: 100, committed: 0) == ["a", "b", "c"])
        #expect(SpacePolicy.releasable(holds, allowance: 3, committed: 0) == [])
    }
}
