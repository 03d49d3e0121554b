import Foundation
import Testing
@testable import MonsoonEngine

/// The persistence gateway's decisions: the turn's work handed over once and in order, the last
/// failure kept, parts awaited until answered, progress saves throttled on the engine's clock, rows
/// from the store adopted through a sequence exactly once, the restore holding transfers and
/// handing out the adoptions asked for meanwhile once, and other processes' commands applied in the order posted.
@Suite struct PersistenceGatewayTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func theTurnsWorkIsHandedOverOnceInOrder() {
        var gateway = PersistenceGateway(persistent: true)
        let nothing = gateway.takeWork()
        #expect(nothing == nil, "a turn with no work hands the worker nothing")
        gateway.hand(.delete(DownloadID("a"), sequence: 1))
        gateway.hand(.saveProgress(id: DownloadID("b"), sequence: 2, bytes: 10, total: nil, checkpoint: nil))
        let taken = gateway.takeWork().map { $0.map { "\($0)" } }
        #expect(taken == ["\(DiskWorker.Work.delete(DownloadID("a"), sequence: 1))",
                          "\(DiskWorker.Work.saveProgress(id: DownloadID("b"), sequence: 2, bytes: 10, total: nil, checkpoint: nil))"])
        let again = gateway.takeWork()
        #expect(again == nil, "handed over once")
    }

    @Test func aPartIsAwaitedUntilEveryAskIsAnswered() {
        var gateway = PersistenceGateway(persistent: true)
        let id = DownloadID("a")
        let record = DownloadRecord(request: request(id, URL(string: "http://127.0.0.1:9/a")!, to: "/tmp/a"), sequence: 1, host: "127.0.0.1:9")
        let preparation = BodyPreparation(row: record, attempt: ObjectIdentifier(PersistenceGatewayTests.self), offset: 0, total: 10, durably: false, diskReserve: 0)
        #expect(!gateway.awaitsPart(id))
        gateway.askForPart(preparation)
        gateway.askForPart(preparation)
        let handed = gateway.takeWork()?.count
        #expect(handed == 2 && gateway.awaitsPart(id), "each ask goes to the disk worker with the turn's work")
        gateway.partAnswered(id)
        #expect(gateway.awaitsPart(id), "one ask is still unanswered")
        gateway.partAnswered(id)
        #expect(!gateway.awaitsPart(id))
        gateway.partAnswered(id)
        #expect(!gateway.awaitsPart(id), "a late answer is harmless")
    }

    @Test func theLastFailureIsKept() {
        var gateway = PersistenceGateway(persistent: true)
        #expect(gateway.storeError == nil)
        gateway.failed(DownloadError(.engineFault, "first"))
        gateway.failed(DownloadError(.engineFault, "second"))
        #expect((gateway.storeError as? DownloadError)?.message == "second")
    }

    @Test func progressIsSavedAtMostOncePerIntervalForEachDownload() {
        var gateway = PersistenceGateway(persistent: true)
        let (first, second) = (DownloadID("a"), DownloadID("b"))
        let interval = PersistenceGateway.progressSaveInterval
        let saves = [
            gateway.progressSaveDue(first, now: now),
            gateway.progressSaveDue(first, now: now + interval / 2),
            gateway.progressSaveDue(second, now: now + interval / 2),
            gateway.progressSaveDue(first, now: now + interval),
            gateway.progressSaveDue(first, now: now + interval * 1.5),
        ]
        // The first save is never held back; each download has its own throttle; the interval
        // counts from the last save.
        #expect(saves == [true, false, true, true, false])
        gateway.forget(first)
        let afterLeaving = gateway.progressSaveDue(first, now: now + interval * 1.5)
        #expect(afterLeaving, "a download that left starts afresh")
    }

    @Test func rowsAreAdoptedThroughASequenceExactlyOnce() {
        var gateway = PersistenceGateway(persistent: true)
        #expect(gateway.isNew(1))
        gateway.adopted(through: 5)
        #expect(gateway.adoptedThrough == 5)
        #expect(!gateway.isNew(3) && !gateway.isNew(5), "rows already taken in are not taken again")
        #expect(gateway.isNew(6))
        gateway.adopted(through: 4)
        #expect(gateway.adoptedThrough == 5, "an older sequence (a late answer) never moves it back")
    }

    @Test func theRestoreHoldsTransfersAndHandsOutItsAdoptionsOnceWhenItEnds() {
        var gateway = PersistenceGateway(persistent: true)
        let stopped = gateway.restoreStarted()
        #expect(gateway.restoring && !stopped())
        gateway.adoptAfterRestore { _, _ in }
        gateway.adoptAfterRestore { _, _ in }
        gateway.stopRestore()
        #expect(stopped(), "the disk worker sees the stop at its next row")
        let taken = gateway.restoreEnded()
        #expect(!gateway.restoring && taken.count == 2)
        let again = gateway.restoreEnded()
        #expect(again.isEmpty, "each adoption is handed out once")
    }

    @Test func otherProcessesCommandsAreAppliedInOrderInChunks() {
        var gateway = PersistenceGateway(persistent: true)
        let first: [DownloadCommand] = [.pause(DownloadID("a")), .resume(DownloadID("b")), .pauseAll]
        let second: [DownloadCommand] = [.retry(DownloadID("c"))]
        let started = [gateway.queueCommands(first, through: 10), gateway.queueCommands(second, through: 11)]
        #expect(started == [true, false], "the only batch starts at once; a later one waits its turn")
        let names = { (commands: ArraySlice<DownloadCommand>?) in commands.map { $0.map { "\($0)" } } }
        #expect(names(gateway.nextCommands(chunk: 2)) == names(first[0..<2]))
        let partly = gateway.applied(2)
        #expect(partly == nil, "the batch is not done: its commands stay")
        #expect(names(gateway.nextCommands(chunk: 2)) == names(first[2...]))
        let firstDone = gateway.applied(1)
        #expect(firstDone == 10, "done: its commands can be deleted through its seq")
        #expect(names(gateway.nextCommands(chunk: 2)) == names(second[...]))
        let secondDone = gateway.applied(1)
        #expect(secondDone == 11)
        let noneLeft = gateway.applied(1)
        #expect(gateway.nextCommands(chunk: 2) == nil && noneLeft == nil)
    }
}
