import Foundation
import Testing
@testable import MonsoonEngine

/// The space governor's own decisions, on readings it is given: a start fits above the reserve or
/// waits, a measurement sets the allowance, and held downloads are let go in queue order once they
/// fit. (Real disks and transfers running out of room: `DiskSpaceTests`, `DiskFullTests`.)
@Suite struct SpaceGovernorTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let none = [DownloadID: Transfer]().values

    private func start(_ governor: SpaceGovernor, free: Int, known: Int?, expected: Int?, readOnly: Bool = false) -> SpaceGovernor.Room {
        governor.roomToStart(folder: "/downloads", measured: VolumeSpace(volume: 7, free: free, readOnly: readOnly), reused: false,
                             offset: 0, known: known, expected: expected, now: now, running: none)
    }

    private func hold(_ sequence: Int, needed: Int, trusted: Bool = true) -> SpaceHold {
        SpaceHold(key: QueueIndex.Key(priority: 0, sequence: sequence), hosts: HostPair(first: 0), volume: 7, needed: needed, trusted: trusted)
    }

    @Test func aStartFitsAboveTheReserveAndWaitsWhenItDoesNot() throws {
        let governor = SpaceGovernor(inbox: EngineInbox(), reserve: 100)
        guard case .starts(let volume?) = start(governor, free: 1000, known: 900, expected: 900) else { Issue.record("900 of 1,000 free, 100 reserved: starts"); return }
        #expect(volume.allowance == 900 && volume.folder == "/downloads")
        guard case .noRoom(let error, let id, let needed, let trusted) = start(governor, free: 1000, known: 901, expected: 901) else {
            Issue.record("one byte into the reserve: waits"); return
        }
        #expect(error.code == .notEnoughDiskSpace && id == 7 && needed == 901 && trusted)
        #expect(error.message.contains("reserve") && error.message.contains("free some space"))
    }

    @Test func aNewDownloadIsPlannedHereWhileItsFolderWasMeasuredAMomentAgo() {
        let governor = SpaceGovernor(inbox: EngineInbox(), reserve: 100)
        let fresh = DownloadRecord(request: DownloadRequest(id: "n", url: URL(string: "http://127.0.0.1:9/n")!, destination: .directory("/downloads")),
                                   sequence: 1, host: "127.0.0.1:9")
        #expect(governor.plannedStart(of: fresh, awaitingPart: false, now: now) == nil, "never measured: the disk worker plans it")
        _ = start(governor, free: 1000, known: nil, expected: nil)
        let ready = governor.plannedStart(of: fresh, awaitingPart: false, now: now.addingTimeInterval(1))
        #expect(ready?.space?.volume == 7 && ready?.spaceReused == true && ready?.plan.offset == 0)
        #expect(governor.plannedStart(of: fresh, awaitingPart: true, now: now) == nil, "a part asked for first: the worker's answer may name the file")
        var named = fresh
        named.filePath = "/downloads/n"
        #expect(governor.plannedStart(of: named, awaitingPart: false, now: now) == nil, "a name: its part is looked at")
        #expect(governor.plannedStart(of: fresh, awaitingPart: false, now: now.addingTimeInterval(SpacePolicy.measureInterval)) == nil,
                "measured too long ago")
        let discarded = DownloadRecord(request: DownloadRequest(id: "x", url: URL(string: "http://127.0.0.1:9/x")!, destination: .discard(checksum: false)),
                                       sequence: 2, host: "127.0.0.1:9")
        #expect(governor.plannedStart(of: discarded, awaitingPart: false, now: now)?.plan.offset == 0, "nothing on disk to look at")
    }

    @Test func aCallersExpectedSizeOnlyDefersWhileTheDiskIsFull() {
        let governor = SpaceGovernor(inbox: EngineInbox(), reserve: 100)
        // The disk to itself: a length only expected is asked for, and the server's decides.
        guard case .starts = start(governor, free: 1000, known: nil, expected: 5000) else { Issue.record("an expected size alone starts"); return }
        // Past the reserve already: nothing starts, whatever its size.
        guard case .noRoom(_, _, _, let trusted) = start(governor, free: 50, known: nil, expected: 10) else { Issue.record("a full disk holds it"); return }
        #expect(trusted, "the disk itself said so")
    }

    @Test func aReadOnlyDiskFailsTheStart() {
        let governor = SpaceGovernor(inbox: EngineInbox(), reserve: 100)
        guard case .readOnly(let error) = start(governor, free: 1 << 30, known: 10, expected: 10, readOnly: true) else { Issue.record("read-only: fails"); return }
        #expect(error.code == .fileSystem && error.message.contains("read-only"))
        #expect(governor.volumes.isEmpty, "nothing is written there, so nothing is counted")
    }

    @Test func aMeasurementSetsTheAllowanceLessTheReserveAndTheWritesSinceItWasAsked() throws {
        let governor = SpaceGovernor(inbox: EngineInbox(), reserve: 100)
        guard case .starts(let volume?) = start(governor, free: 1000, known: 10, expected: 10) else { Issue.record("starts"); return }
        volume.written = 300
        governor.measured(7, free: 2000, writtenAtRequest: 100, now: now + 5, running: none)
        #expect(volume.allowance == 2000 - 100 - 200 && volume.measuredAt == now + 5 && !volume.measuring)
        // A disk that cannot be measured any more stops no write (a full one still fails it).
        governor.measured(7, free: nil, writtenAtRequest: 300, now: now + 6, running: none)
        #expect(volume.allowance == Int.max / 4)
        // A whole file the worker could not write gives its bytes back.
        volume.allowance = 50
        governor.volumes[7]?.giveBack(25)
        #expect(volume.allowance == 75 && volume.written == 275)
    }

    @Test func heldDownloadsAreLetGoInQueueOrderOnceTheyFit() {
        let governor = SpaceGovernor(inbox: EngineInbox(), reserve: 100)
        _ = start(governor, free: 100 + 500, known: 10, expected: 10)
        governor.holds["big"] = hold(1, needed: 800)
        governor.holds["small"] = hold(2, needed: 300)
        governor.holds["second"] = hold(3, needed: 300)
        // 500 of room: the first that fits is let go, and counts against the next.
        #expect(governor.releasable(running: none).map(\.id) == ["small"])
        #expect(Set(governor.holds.keys) == ["big", "second"])
        governor.measured(7, free: 100 + 2000, writtenAtRequest: 0, now: now, running: none)
        #expect(governor.releasable(running: none).map(\.id) == ["big", "second"])
        #expect(governor.holds.isEmpty)
    }

    @Test func aHoldOnAnExpectedSizeIsTriedOnceItsDiskIsIdle() {
        let governor = SpaceGovernor(inbox: EngineInbox(), reserve: 100)
        _ = start(governor, free: 100 + 500, known: 10, expected: 10)
        governor.holds["sure"] = hold(1, needed: 1000)
        governor.holds["guess"] = hold(2, needed: 1000, trusted: false)
        let released = governor.releasable(running: none)
        #expect(released.map(\.id) == ["guess"] && released.first?.hold.key.sequence == 2)
        #expect(Array(governor.holds.keys) == ["sure"], "a length the disk or a server gave waits for room")
    }

    @Test func measurementsUseTheReadingGivenOnceEachAndComeBackThroughTheInbox() throws {
        let inbox = EngineInbox()
        let asked = Locked<[String]>([])
        let governor = SpaceGovernor(inbox: inbox, reserve: 100) { folder in
            asked.withLock { $0.append(folder) }
            return VolumeSpace(volume: 7, free: 1 << 20)
        }
        #expect(governor.nextCheck == nil, "nothing waits for room: no wake-up")
        guard case .starts(let volume?) = start(governor, free: 1000, known: 10, expected: 10) else { Issue.record("starts"); return }
        governor.measure(volume)
        governor.measure(volume)   // one on its way already: not asked again
        governor.waitUntilDone()
        #expect(asked.withLock { $0 } == ["/downloads"] && volume.measuring)
        #expect(inbox.takeJobs().count == 1)
        governor.holds["held"] = hold(1, needed: 1)
        governor.check(now: now, running: none)
        #expect(governor.nextCheck == now + SpacePolicy.measureInterval)
    }
}
