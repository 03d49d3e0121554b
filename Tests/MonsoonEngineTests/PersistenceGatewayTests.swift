import Foundation
import Testing
@testable import MonsoonEngine

/// The persistence gateway's decisions, with a real disk worker on a temporary SQLite file: the
/// turn's work handed over once and in order, the last failure kept, parts awaited until answered,
/// progress saves throttled and checkpoints asked for on the engine's clock, the rows a command
/// needs read (and those in memory held for it), rows from the store adopted through a sequence
/// exactly once, the restore (read in chunks, stopped at shutdown, holding the adoptions asked for
/// meanwhile), and other processes' commands applied in the order posted, then deleted.
@Suite struct PersistenceGatewayTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// A gateway on a fresh queue database (also opened here, as another process would), with the
    /// inbox its disk worker answers to.
    private struct Fixture {
        let folder = TemporaryFolder()
        let inbox = EngineInbox()
        let store: DownloadStore
        var gateway: PersistenceGateway

        init(checkpoint: EngineConfiguration.Checkpoint = .init()) throws {
            store = try DownloadStore(path: folder.file("queue.sqlite"))
            gateway = PersistenceGateway(store: try DownloadStore(path: folder.file("queue.sqlite")), inbox: inbox, hub: EventHub(), checkpoint: checkpoint)
        }

        /// Stores a queued download, as another process adds one.
        func insert(_ id: DownloadID) throws -> DownloadRecord {
            var record = DownloadRecord(request: request(id, URL(string: "http://127.0.0.1:9/\(id)")!, to: folder.file("\(id)")), sequence: 0, host: "127.0.0.1:9")
            record.sequence = try store.nextSequence()
            _ = try store.insert(record)
            return record
        }

        /// Hands the turn's work to the disk worker and waits until it is done.
        mutating func run() {
            gateway.submit(nil)
            gateway.waitUntilDone()
        }
    }

    private func record(_ id: DownloadID, sequence: Int = 1) -> DownloadRecord {
        DownloadRecord(request: request(id, URL(string: "http://127.0.0.1:9/\(id)")!, to: "/tmp/\(id)"), sequence: sequence, host: "127.0.0.1:9")
    }

    @Test func theTurnsWorkIsHandedOverOnceInOrder() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        let nothing = fixture.gateway.takeWork()
        #expect(nothing == nil, "a turn with no work hands the worker nothing")
        fixture.gateway.hand(.delete(DownloadID("a"), sequence: 1))
        fixture.gateway.hand(.saveProgress(id: DownloadID("b"), sequence: 2, bytes: 10, total: nil, checkpoint: nil))
        let taken = fixture.gateway.takeWork().map { $0.map { "\($0)" } }
        #expect(taken == ["\(DiskWorker.Work.delete(DownloadID("a"), sequence: 1))",
                          "\(DiskWorker.Work.saveProgress(id: DownloadID("b"), sequence: 2, bytes: 10, total: nil, checkpoint: nil))"])
        let again = fixture.gateway.takeWork()
        #expect(again == nil, "handed over once")
    }

    @Test func aSaveReachesTheDatabaseBeforeWhatWasAskedAfterIt() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        var records = RecordTable(persistent: true)
        var saved = try fixture.insert("a")
        saved.bytes = 42
        records["a"] = saved
        fixture.gateway.save("a", records: &records)
        let path = fixture.folder.file("queue.sqlite")
        let seen = Locked<Int?>(nil)
        fixture.gateway.submit(nil, then: { error in
            // Its own connection, as another process reads: nil when the read fails, which the expectation reports.
            let bytes = error == nil ? (try? DownloadStore(path: path).record(withID: "a"))??.bytes : nil
            seen.withLock { $0 = bytes }
        })
        fixture.gateway.waitUntilDone()
        #expect(seen.withLock { $0 } == 42, "the row is committed before what was asked after it runs")
        #expect(records.hasSavesInFlight("a"), "the record stays in memory until the loop hears of the commit")
    }

    @Test func aPartIsAwaitedUntilEveryAskIsAnswered() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        let id = DownloadID("a")
        let preparation = BodyPreparation(row: record(id), attempt: ObjectIdentifier(PersistenceGatewayTests.self), offset: 0, total: 10, durably: false, diskReserve: 0)
        #expect(!fixture.gateway.awaitsPart(id))
        fixture.gateway.askForPart(preparation)
        fixture.gateway.askForPart(preparation)
        let handed = fixture.gateway.takeWork()?.count
        #expect(handed == 2 && fixture.gateway.awaitsPart(id), "each ask goes to the disk worker with the turn's work")
        fixture.gateway.partAnswered(id)
        #expect(fixture.gateway.awaitsPart(id), "one ask is still unanswered")
        fixture.gateway.partAnswered(id)
        #expect(!fixture.gateway.awaitsPart(id))
        fixture.gateway.partAnswered(id)
        #expect(!fixture.gateway.awaitsPart(id), "a late answer is harmless")
    }

    @Test func theLastFailureIsKept() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        #expect(fixture.gateway.storeError == nil)
        fixture.gateway.failed(DownloadError(.engineFault, "first"))
        fixture.gateway.failed(DownloadError(.engineFault, "second"))
        #expect((fixture.gateway.storeError as? DownloadError)?.message == "second")
    }

    @Test func progressIsSavedAtMostOncePerIntervalForEachDownload() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        let (first, second) = (DownloadID("a"), DownloadID("b"))
        let interval = PersistenceGateway.progressSaveInterval
        let saves = [
            fixture.gateway.progressSaveDue(first, now: now),
            fixture.gateway.progressSaveDue(first, now: now + interval / 2),
            fixture.gateway.progressSaveDue(second, now: now + interval / 2),
            fixture.gateway.progressSaveDue(first, now: now + interval),
            fixture.gateway.progressSaveDue(first, now: now + interval * 1.5),
        ]
        // The first save is never held back; each download has its own throttle; the interval
        // counts from the last save.
        #expect(saves == [true, false, true, true, false])
        fixture.gateway.forget(first)
        let afterLeaving = fixture.gateway.progressSaveDue(first, now: now + interval * 1.5)
        #expect(afterLeaving, "a download that left starts afresh")
    }

    @Test func aCheckpointIsAskedEveryFewBytesOrSecondsOneAtATime() throws {
        let fixture = try Fixture(checkpoint: .init(bytes: 100, seconds: 5))
        defer { fixture.folder.remove() }
        var part = Transfer.Part()
        part.checkpoint = PartCheckpoint(requested: 50, requestedAt: now, inFlight: false)
        #expect(fixture.gateway.checkpointDue(part, fileSize: 149, now: now + 1) == nil, "no file to flush yet")
        part.fd = 3   // only looked at, never used
        #expect(fixture.gateway.checkpointDue(part, fileSize: 149, now: now + 1) == nil, "fewer bytes than the step, too soon")
        #expect(fixture.gateway.checkpointDue(part, fileSize: 150, now: now + 1) == 150, "a step of bytes")
        #expect(fixture.gateway.checkpointDue(part, fileSize: 51, now: now + 5) == 51, "the longest time between two")
        #expect(fixture.gateway.checkpointDue(part, fileSize: 50, now: now + 60) == nil, "nothing new since the last")
        part.checkpoint.inFlight = true
        #expect(fixture.gateway.checkpointDue(part, fileSize: 500, now: now + 60) == nil, "one flush at a time")
    }

    @Test func aCommandReadsTheRowsNotInMemoryAndHoldsTheOthersUntilItHasRun() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        let stored = try fixture.insert("stored")
        var records = RecordTable(persistent: true)
        records["hot"] = record("hot")
        #expect(fixture.gateway.rowsToRead(["hot"], skippingUnreadable: false, pinning: &records) == nil, "all in memory: it runs at once")
        let read = try #require(fixture.gateway.rowsToRead(["hot", "stored"], skippingUnreadable: false, pinning: &records))
        #expect(read.missing == ["stored"] && read.held == ["hot"])
        let result = fixture.gateway.took(read.read(fixture.store)).map { records.preload($0) }
        #expect(throws: Never.self) { try result.get() }
        #expect(records["stored"]?.sequence == stored.sequence, "the row read is at hand while the command runs")
        records.evictIfAtRest("hot")
        #expect(records.isHot("hot"), "pinned: a record at rest stays while the command counts on it")
        fixture.gateway.finished(read, result, records: &records)
        #expect(records["stored"] == nil && !records.isHot("hot"), "once it has run, neither stays")
        // A failed read is the command's answer, and kept for persistenceError.
        let failed: Result<[DownloadRecord], DownloadManagerError> = fixture.gateway.took(.failure(ErrorBox(error: DownloadError(.engineFault, "disk on fire"))))
        guard case .failure(let error) = failed else { Issue.record("a failed read fails the command"); return }
        #expect(error.code == .storage && error.message.hasSuffix("disk on fire"))
        #expect((fixture.gateway.storeError as? DownloadError)?.message == "disk on fire")
    }

    /// A `get` lists its URLs' rows, then retries some: the commands right after a listing take
    /// its rows instead of reading them again, only while this engine has handed the worker nothing
    /// that may write since the listing's read (publishing events and answers write nothing), and
    /// for half a second at most (other processes delete rows without telling the engine).
    @Test func theCommandsAfterAListingTakeItsRowsWhileNothingWasWrittenSince() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        let (a, b) = (try fixture.insert("a"), try fixture.insert("b"))
        var records = RecordTable(persistent: true)
        records["hot"] = record("hot")
        let listing = [[a], [b]]
        func keep(at time: Date) { fixture.gateway.keepListed(listing, handedBefore: fixture.gateway.writesHanded, now: time) }
        func take(_ ids: [DownloadID], at time: Date) -> [DownloadID]? {
            fixture.gateway.takeListed(ids, records: records, now: time)?.map(\.request.id)
        }

        keep(at: now)
        fixture.gateway.hand(.publish([]))
        fixture.gateway.hand(.then { _ in })
        #expect(take(["a", "c"], at: now) == nil, "a download it did not list: all are read")
        #expect(take(["hot", "a"], at: now) == ["a"], "the rows not in memory, as listed")
        #expect(take(["a"], at: now) == nil, "each taken once")
        #expect(take(["b"], at: now + PersistenceGateway.listingLifetime) == ["b"], "the rest, for the next command")

        keep(at: now)
        #expect(take(["a"], at: now + PersistenceGateway.listingLifetime + 0.001) == nil, "too old: read again")
        #expect(take(["b"], at: now) == nil, "and let go")

        keep(at: now)
        fixture.gateway.askForPart(BodyPreparation(row: a, attempt: ObjectIdentifier(PersistenceGatewayTests.self), offset: 0, total: 10, durably: false, diskReserve: 0))
        #expect(take(["a"], at: now) == nil, "a write handed after the listing (a part named in its row): its rows may be old")

        let handedBefore = fixture.gateway.writesHanded
        fixture.gateway.hand(.delete("b", sequence: b.sequence))
        fixture.gateway.keepListed(listing, handedBefore: handedBefore, now: now)
        #expect(take(["a"], at: now) == nil, "a write handed between the read and its answer: not kept")
        _ = fixture.gateway.takeWork()   // not run: the part's folder is not there
    }

    @Test func rowsAreAdoptedThroughASequenceExactlyOnce() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        fixture.gateway.adopted(through: 5)
        #expect(fixture.gateway.adoptedThrough == 5)
        fixture.gateway.adopted(through: 4)
        #expect(fixture.gateway.adoptedThrough == 5, "an older sequence (a late answer) never moves it back")
        // Of rows another process added: those past the last one known, and not in memory.
        var records = RecordTable(persistent: true)
        records["hot"] = record("hot", sequence: 7)
        let rows = [(record("old", sequence: 4), record("old", sequence: 4)), (record("taken", sequence: 5), record("taken", sequence: 5)),
                    (record("hot", sequence: 7), record("hot", sequence: 7)),
                    (record("new", sequence: 8), record("new", sequence: 8))]
        #expect(fixture.gateway.unseen(rows, records: records).map(\.stored.request.id) == ["new"], "rows already taken in (through 5) are not taken again")
        #expect(fixture.gateway.adoptedThrough == 8 && fixture.gateway.unseen(rows, records: records).isEmpty, "each once")
    }

    @Test func anAdoptedRowIsSavedOnlyWhenItsPartChangedIt() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        var records = RecordTable(persistent: true)
        var scheduler = DownloadScheduler()
        let asStored = record("same", sequence: 1)
        fixture.gateway.adopt((asStored, asStored), into: &records, scheduler: &scheduler)
        #expect(!records.isHot("same") && fixture.gateway.takeWork() == nil, "a queued row as stored stays on disk only")
        var grown = record("grown", sequence: 2)
        grown.bytes = 10
        #expect(fixture.gateway.adopt((record("grown", sequence: 2), grown), into: &records, scheduler: &scheduler).bytes == 10)
        #expect(records.isHot("grown") && fixture.gateway.takeWork()?.count == 1, "what its part holds is saved")
        #expect(scheduler.queue.entries.map(\.id) == ["same", "grown"], "both queued: in line")
    }

    @Test func aForgottenDownloadsRowGoesBeforeItsPartAndItsFileOnlyIfAsked() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        var records = RecordTable(persistent: true)
        var done = record("done", sequence: 1)
        done.filePath = "/tmp/done"
        done.restoreStatus(.completed)
        records[done.request.id] = done
        fixture.gateway.forget(done, deleteFiles: true, rowDeleted: false, records: &records)
        let work = fixture.gateway.takeWork()?.map { "\($0)" } ?? []
        #expect(!records.isHot("done") && work.count == 2 && work[0].hasPrefix("delete"))
        #expect(work.last?.contains("/tmp/done.part") == true && work.last?.contains("\"/tmp/done\"") == true, "the part, then the file asked for")
        // Its row went with the insert of its replacement: only its part goes.
        records[done.request.id] = done
        fixture.gateway.forget(done, deleteFiles: false, rowDeleted: true, records: &records)
        let replaced = fixture.gateway.takeWork()?.map { "\($0)" } ?? []
        #expect(replaced.count == 1 && replaced[0].contains("/tmp/done.part") && !replaced[0].contains("\"/tmp/done\""))
    }

    @Test func theRestoreReadsTheQueueInChunksAndStopsAtShutdown() throws {
        let fixture = try Fixture()
        defer { fixture.folder.remove() }
        var last = 0
        for index in 0..<(RestoreReader.chunk + 1) { last = try fixture.insert(DownloadID("r\(index)")).sequence }
        var chunks: [Int] = []
        var next: Int??
        RestoreReader.restore(from: fixture.store) { message in
            switch message {
            case .rows(let rows): chunks.append(rows.count)
            case .problem(let box): Issue.record(box.error)
            case .done(let sequence, _): next = sequence
            }
            return true
        }
        #expect(chunks == [RestoreReader.chunk, 1] && next == last + 1)
        var posted = 0
        RestoreReader.restore(from: fixture.store) { _ in posted += 1; return false }
        #expect(posted == 2, "shut down: the first chunk's answer is refused, no other row is read, and the end is said once")
    }

    /// A completed download is at rest: the restore leaves its row in the store (a home's thousands of
    /// them cost every command at start), yet counts it seen, so no later look takes it for a new one.
    @Test func theRestoreLeavesCompletedDownloadsInTheStoreButCountsThemSeen() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        _ = try fixture.insert("queued")
        var finished = try fixture.insert("finished")
        finished.restoreStatus(.completed)
        try fixture.store.update(finished)
        var restored: [DownloadID] = []
        var seen: Int??
        RestoreReader.restore(from: fixture.store) { message in
            switch message {
            case .rows(let rows): restored += rows.map(\.stored.request.id)
            case .problem(let box): Issue.record(box.error)
            case .done(_, let through): seen = through
            }
            return true
        }
        #expect(restored == ["queued"] && seen == finished.sequence)
        fixture.gateway.requestRestore()
        _ = fixture.gateway.restored(.done(nextSequence: finished.sequence + 1, seenThrough: finished.sequence), records: RecordTable(persistent: true))
        #expect(fixture.gateway.newRowsToRead(replying: []) == finished.sequence, "rows other processes add are read from past it")
        let added = try fixture.insert("added")
        #expect(try RestoreReader.newRows(in: fixture.store, after: finished.sequence).rows.map(\.stored.request.id) == [added.request.id])
    }

    @Test func theRestoreHoldsTransfersAndTheAdoptionsAskedForMeanwhile() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        _ = try fixture.insert("a")
        fixture.gateway.requestRestore()
        #expect(fixture.gateway.restoring)
        #expect(fixture.gateway.newRowsToRead(replying: [.ignored, .ignored]) == nil, "not before the restore's last sequence is known")
        #expect(fixture.gateway.newRowsToRead(replying: []) == nil)
        fixture.run()
        #expect(fixture.inbox.takeJobs().count == 2, "the disk worker answered with the rows, then the end")
        var records = RecordTable(persistent: true)
        records["a"] = record("a", sequence: 1)
        guard case .adopt(let rows)? = fixture.gateway.restored(.rows([(record("a", sequence: 1), record("a", sequence: 1)), (record("b", sequence: 2), record("b", sequence: 2))]), records: records) else {
            Issue.record("rows are adopted"); return
        }
        #expect(rows.map(\.stored.request.id) == ["b"] && fixture.gateway.adoptedThrough == 2, "none already in memory")
        #expect(fixture.gateway.restored(.problem(ErrorBox(error: DownloadError(.engineFault, "bad row"))), records: records) == nil)
        #expect((fixture.gateway.storeError as? DownloadError)?.message == "bad row")
        guard case .done(let next, let adoptions, let readAll)? = fixture.gateway.restored(.done(nextSequence: 9), records: records) else {
            Issue.record("the restore ends"); return
        }
        #expect(!fixture.gateway.restoring && next == 9 && adoptions?.count == 2, "the adoptions asked for meanwhile, once")
        #expect(!readAll, "no last sequence seen: the read stopped part way")
        guard case .done(_, let none, _)? = fixture.gateway.restored(.done(nextSequence: nil), records: records) else { return }
        #expect(none == nil)
        #expect(fixture.gateway.newRowsToRead(replying: []) == 2, "after it: read from the last row known")
        guard case .done(_, _, let all)? = fixture.gateway.restored(.done(nextSequence: 9, seenThrough: 8), records: records) else { return }
        #expect(all, "the last sequence seen: every row was read")
    }

    @Test func aRestoreStoppedAtShutdownAnswersNothing() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        _ = try fixture.insert("a")
        fixture.gateway.requestRestore()
        fixture.gateway.stopRestore()
        fixture.run()
        #expect(fixture.inbox.takeJobs().isEmpty)
    }

    @Test func otherProcessesCommandsAreAppliedInOrderInChunksThenDeleted() throws {
        var fixture = try Fixture()
        defer { fixture.folder.remove() }
        let first: [DownloadCommand] = [.pause(DownloadID("a")), .resume(DownloadID("b")), .pauseAll]
        let second: [DownloadCommand] = [.retry(DownloadID("c"))]
        var last = 0
        for command in first + second { last = try fixture.store.post([command]) }
        let started = [fixture.gateway.queueCommands(first, through: last - 1), fixture.gateway.queueCommands(second, through: last)]
        #expect(started == [true, false], "the only batch starts at once; a later one waits its turn")
        let names = { (commands: ArraySlice<DownloadCommand>?) in commands.map { $0.map { "\($0)" } } }
        let head = fixture.gateway.nextCommands(chunk: 2)
        #expect(names(head?.commands) == names(first[0..<2]) && head?.ids == ["a", "b"])
        let partly = fixture.gateway.applied(2)
        #expect(partly == nil && fixture.gateway.takeWork() == nil, "the batch is not done: its commands stay")
        #expect(names(fixture.gateway.nextCommands(chunk: 2)?.commands) == names(first[2...]) && fixture.gateway.nextCommands(chunk: 2)?.ids == [])
        let firstDone = fixture.gateway.applied(1)
        #expect(firstDone == last - 1, "done: its commands are deleted through its seq")
        fixture.run()
        #expect(try fixture.store.commands(after: 0).commands == second)
        #expect(names(fixture.gateway.nextCommands(chunk: 2)?.commands) == names(second[...]))
        let secondDone = fixture.gateway.applied(1)
        #expect(secondDone == last)
        fixture.run()
        #expect(try fixture.store.commands(after: 0).commands.isEmpty)
        let noneLeft = fixture.gateway.applied(1)
        #expect(fixture.gateway.nextCommands(chunk: 2) == nil && noneLeft == nil)
    }
}
