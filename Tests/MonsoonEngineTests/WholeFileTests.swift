import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// A small file whose whole body comes before its part is needed is written in one pass
/// (`WholeFile`): unnamed, flushed, named in its folder, and its row saved completed with it.
@Suite struct WholeFileTests {
    /// Eight files the server names alike, into a folder where a file of that name is the user's:
    /// each gets a name of its own beside the others, whole, with the server's time, and the
    /// user's file stays as it was. No part is left, and every row says where its file is.
    @Test func filesNamedAlikeAreWrittenWholeBesideEachOtherAndBesideTheUsers() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        defer { folder.remove(); home.remove(); server.stop() }
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        let bodies = (0..<8).map { Body.pattern(size: 40_000 + $0 * 1000, seed: UInt64($0 + 41)) }
        for (index, body) in bodies.enumerated() {
            server.setRoute("/e\(index).mp3", Route(body: body, contentType: "audio/mpeg", lastModified: modified,
                                                    contentDisposition: "attachment; filename=\"episode.mp3\""))
        }
        try Data("mine".utf8).write(to: URL(filePath: folder.file("episode.mp3")))
        let database = home.file("queue.sqlite")
        let manager = try DownloadManager(configuration: fastConfiguration(concurrency: 4), databasePath: database, watchesOtherProcesses: false)
        _ = try await manager.enqueue(contentsOf: (0..<8).map {
            DownloadRequest(id: DownloadID("e\($0)"), url: server.url("/e\($0).mp3"), destination: .directory(folder.path))
        })
        var paths: Set<String> = []
        for (index, body) in bodies.enumerated() {
            let done = try await waitFor(manager, DownloadID("e\(index)"), .completed)
            let path = try #require(done.filePath)
            #expect(sha256(ofFile: path) == body.sha256Hex(), "\(path) holds download e\(index)'s body")
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.modificationDate] as? Date) == modified)
            paths.insert(path)
        }
        #expect(paths == Set((2...9).map { folder.file("episode (\($0)).mp3") }))
        #expect(try String(contentsOfFile: folder.file("episode.mp3"), encoding: .utf8) == "mine")
        #expect(folder.contents().filter { $0.hasSuffix(PartFile.suffix) } == [])
        #expect(server.requests.count == 8)
        #expect(await manager.persistenceError() == nil)
        await manager.shutdown()

        let rows = try Database(path: database)
        #expect(try rows.scalarInt("SELECT count(*) FROM downloads WHERE status = 'completed' AND file_path IS NOT NULL") == 8)
        #expect(try rows.scalarInt("SELECT count(DISTINCT file_path) FROM downloads") == 8)
    }

    /// A folder holding the user's `talk.mp3` and `talk (2).mp3` to `talk (150).mp3`: the plain
    /// name is refused by the link itself, the numbered ones are looked at in one pass, and the
    /// file lands as `talk (151).mp3` (not "no free name" after a hundred tries).
    @Test func aFileFindsItsNamePastAHundredNumberedOnes() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        defer { folder.remove(); home.remove(); server.stop() }
        let body = Body.pattern(size: 20_000, seed: 9)
        server.setRoute("/talk.mp3", Route(body: body, contentType: "audio/mpeg"))
        try Data("mine".utf8).write(to: URL(filePath: folder.file("talk.mp3")))
        for number in 2...150 { try Data("mine \(number)".utf8).write(to: URL(filePath: folder.file("talk (\(number)).mp3"))) }
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: home.file("queue.sqlite"), watchesOtherProcesses: false)
        _ = try await manager.enqueue(DownloadRequest(id: "t", url: server.url("/talk.mp3"), destination: .directory(folder.path)))
        let done = try await waitFor(manager, "t", .completed)
        #expect(done.filePath == folder.file("talk (151).mp3"))
        #expect(sha256(ofFile: folder.file("talk (151).mp3")) == body.sha256Hex())
        #expect(try String(contentsOfFile: folder.file("talk.mp3"), encoding: .utf8) == "mine")
        #expect(try String(contentsOfFile: folder.file("talk (150).mp3"), encoding: .utf8) == "mine 150")
        #expect(folder.contents().count == 151)
        #expect(await manager.persistenceError() == nil)
        await manager.shutdown()
    }

    /// A run killed after naming a file but before its row said so leaves the row as it was
    /// (queued, no file) and the file in place. The next run downloads it again and takes that
    /// name back, since the file is tagged as this download's: no "show (2).mp3" beside it.
    @Test func aFileNamedByAKilledRunIsTakenBackNotDuplicated() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        defer { folder.remove(); home.remove(); server.stop() }
        let first = Body.pattern(size: 30_000, seed: 5)
        let second = Body.pattern(size: 31_000, seed: 6)
        server.setRoute("/show.mp3", Route(body: first, contentType: "audio/mpeg"))
        let database = home.file("queue.sqlite")
        var manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database, watchesOtherProcesses: false)
        _ = try await manager.enqueue(DownloadRequest(id: "a", url: server.url("/show.mp3"), destination: .directory(folder.path)))
        #expect(try await waitFor(manager, "a", .completed).filePath == folder.file("show.mp3"))
        await manager.shutdown()

        // The row as the killed run left it: its transaction, which named the file, never committed.
        let rows = try Database(path: database)
        try rows.execute("UPDATE downloads SET status = 'queued', file_path = NULL, bytes = 0 WHERE id = 'a'")
        server.setRoute("/show.mp3", Route(body: second, contentType: "audio/mpeg"))
        manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database, watchesOtherProcesses: false)
        let done = try await waitFor(manager, "a", .completed)
        #expect(done.filePath == folder.file("show.mp3"))
        #expect(sha256(ofFile: folder.file("show.mp3")) == second.sha256Hex())
        #expect(folder.contents() == ["show.mp3"])
        #expect(server.requests(for: "/show.mp3").count == 2)
        #expect(await manager.persistenceError() == nil)
        await manager.shutdown()
    }

    /// Another download's file of that name, tagged as its own, is no more this one's to take than a
    /// user's: this one is numbered.
    @Test func anotherDownloadsFileIsNeverTaken() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        defer { folder.remove(); home.remove(); server.stop() }
        let one = Body.pattern(size: 20_000, seed: 7)
        let two = Body.pattern(size: 21_000, seed: 8)
        server.setRoute("/a/talk.mp3", Route(body: one, contentType: "audio/mpeg"))
        server.setRoute("/b/talk.mp3", Route(body: two, contentType: "audio/mpeg"))
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: home.file("queue.sqlite"), watchesOtherProcesses: false)
        _ = try await manager.enqueue(DownloadRequest(id: "a", url: server.url("/a/talk.mp3"), destination: .directory(folder.path)))
        #expect(try await waitFor(manager, "a", .completed).filePath == folder.file("talk.mp3"))
        _ = try await manager.enqueue(DownloadRequest(id: "b", url: server.url("/b/talk.mp3"), destination: .directory(folder.path)))
        #expect(try await waitFor(manager, "b", .completed).filePath == folder.file("talk (2).mp3"))
        #expect(sha256(ofFile: folder.file("talk.mp3")) == one.sha256Hex())
        #expect(sha256(ofFile: folder.file("talk (2).mp3")) == two.sha256Hex())
        await manager.shutdown()
    }
}

extension WholeFileTests {
    /// A small file that comes slowly is not kept in memory to the end: a second after its first
    /// bytes (by the engine's clock) its part is made and what came is on disk, so a killed run
    /// loses no more than that.
    @Test func aSlowSmallFileGetsItsPartWithinASecond() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); home.remove(); server.stop() }
        let body = Body.pattern(size: 120_000, seed: 9)
        // The first 30,000 bytes, then the rest held until the test has seen the part.
        server.setRoute("/slow.mp3", Route(body: body, contentType: "audio/mpeg", gate: gate, gateAfter: 30_000))
        let time = ManualClock()
        var configuration = fastConfiguration()
        configuration.clock = time.clock
        let manager = try DownloadManager(configuration: configuration, databasePath: home.file("queue.sqlite"), watchesOtherProcesses: false)
        let (part, file) = (folder.file("slow.mp3.part"), folder.file("slow.mp3"))
        _ = try await manager.enqueue(DownloadRequest(id: "s", url: server.url("/slow.mp3"), destination: .directory(folder.path)))
        try await eventually("the first bytes kept in memory") {
            guard server.bodyBytesSent >= 30_000 else { return false }
            return try await manager.peek { $0.waitingForParts.bodiesHeldBack } == 1
        }
        _ = try await manager.counts()   // a turn of the loop, the engine's time unchanged
        #expect(!PartFile.exists(part), "no part yet: the body may still come whole")
        time.advance(by: 1)
        _ = try await manager.counts()   // a turn of the loop, which finds the body held a second
        try await eventually("the part, with bytes in it") { (PartFile.size(at: part) ?? 0) > 0 }
        #expect(!PartFile.exists(file), "the body still comes")
        gate.open()
        _ = try await waitFor(manager, "s", .completed)
        #expect(sha256(ofFile: file) == body.sha256Hex())
        #expect(server.requests(for: "/slow.mp3").count == 1)
        await manager.shutdown()
    }
}

extension WholeFileTests {
    /// Another process holds the database past the busy timeout while a whole file is to be named:
    /// its transaction fails, the unnamed file goes with it, and the download is tried again (not
    /// failed), then lands under its own name, with nothing else left in the folder.
    @Test func aDatabaseHeldPastTheTimeoutRetriesTheFileInsteadOfFailingIt() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); home.remove(); server.stop() }
        let body = Body.pattern(size: 50_000, seed: 10)
        server.setRoute("/w.mp3", Route(body: body, contentType: "audio/mpeg", gate: gate))
        server.setRoute("/first.mp3", Route(body: .bytes(Array("first".utf8)), contentType: "audio/mpeg"))
        let database = home.file("queue.sqlite")
        // A busy timeout the hold outlasts at once; and the retry waits for the test's clock, so it
        // comes only once the lock is let go.
        let time = ManualClock()
        var configuration = fastConfiguration(concurrency: 1)
        configuration.storeBusyTimeout = 0.5
        configuration.clock = time.clock
        let manager = try DownloadManager(configuration: configuration, databasePath: database, watchesOtherProcesses: false)
        let recorder = EventRecorder(manager)
        // A first file, so the queue's identity (its first whole file makes it) is there already.
        _ = try await manager.enqueue(DownloadRequest(id: "first", url: server.url("/first.mp3"), destination: .directory(folder.path)))
        _ = try await waitFor(manager, "first", .completed)
        // Taken before the answer comes, held until the file's transaction has given up on it.
        let held = holdDatabase(database, once: { !server.requests(for: "/w.mp3").isEmpty }) { _ in
            gate.open()
            guard block(until: { recorder.statuses(of: "w").contains(.waitingToRetry) }) else {
                throw Timeout(description: "w never waited to retry: \(recorder.statuses(of: "w"))")
            }
        }
        _ = try await manager.enqueue(DownloadRequest(id: "w", url: server.url("/w.mp3"), destination: .directory(folder.path)))
        let waiting = try await recorder.waitFor("w", .waitingToRetry)
        #expect(waiting.lastError?.message.hasPrefix("could not save the download in the database: ") == true, "\(String(describing: waiting.lastError))")
        try await eventually("the lock let go") { held.withLock { $0 != nil } }
        try #require(held.withLock { $0 }).get()
        #expect(server.requests(for: "/w.mp3").count == 1)
        time.advance(by: 10)   // past the retry's delay (fastConfiguration's longest is 5 s)
        let done = try await waitFor(manager, "w", .completed)
        #expect(done.filePath == folder.file("w.mp3"))
        #expect(sha256(ofFile: folder.file("w.mp3")) == body.sha256Hex())
        #expect(folder.contents() == ["first.mp3", "w.mp3"])
        #expect(server.requests(for: "/w.mp3").count == 2, "tried again once the database was free")
        await manager.shutdown()
    }
}

extension WholeFileTests {
    /// The tag names the queue too: a download of the same id and sequence in another database
    /// (a new home), or in an engine with no database at all, never takes a file of the same name.
    @Test func aFileOfTheSameIdFromAnotherQueueIsNeverTaken() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        defer { folder.remove(); home.remove(); server.stop() }
        let bodies = (0..<4).map { Body.pattern(size: 10_000 + $0, seed: UInt64(20 + $0)) }
        for (index, body) in bodies.enumerated() { server.setRoute("/\(index)/talk.mp3", Route(body: body, contentType: "audio/mpeg")) }
        for (index, database) in [home.file("one.sqlite"), home.file("two.sqlite"), nil, nil].enumerated() {
            let manager = try database.map { try DownloadManager(configuration: fastConfiguration(), databasePath: $0, watchesOtherProcesses: false) }
                ?? DownloadManager(configuration: fastConfiguration())
            _ = try await manager.enqueue(DownloadRequest(id: "a", url: server.url("/\(index)/talk.mp3"), destination: .directory(folder.path)))
            _ = try await waitFor(manager, "a", .completed)
            await manager.shutdown()
        }
        #expect(folder.contents() == ["talk (2).mp3", "talk (3).mp3", "talk (4).mp3", "talk.mp3"])
        for (index, name) in ["talk.mp3", "talk (2).mp3", "talk (3).mp3", "talk (4).mp3"].enumerated() {
            #expect(sha256(ofFile: folder.file(name)) == bodies[index].sha256Hex(), "\(name) is still download \(index)'s")
        }
    }
}

extension WholeFileTests {
    /// Removed (with its file) while its whole file waits for the disk worker: the removal waits
    /// for the file to land, then takes the file and the row away. Nothing is left.
    @Test func aRemovalWhileTheFileLandsTakesItAway() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        let gate = Gate()
        let removalAsked = Gate()   // a flag: the holder lets go once it opens
        defer { gate.open(); removalAsked.open(); folder.remove(); home.remove(); server.stop() }
        let body = Body.pattern(size: 60_000, seed: 12)
        server.setRoute("/r.mp3", Route(body: body, contentType: "audio/mpeg", gate: gate))
        let database = home.file("queue.sqlite")
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database, watchesOtherProcesses: false)
        // The worker is held at its transaction from before the body comes until after the removal.
        let held = holdDatabase(database, once: { !server.requests(for: "/r.mp3").isEmpty }) { _ in
            gate.open()
            guard block(until: { removalAsked.isOpen }) else { throw Timeout(description: "the removal was never asked") }
        }
        // Its own task: its answer may wait for the worker, which waits for the hold.
        let enqueued = Task { try await manager.enqueue(DownloadRequest(id: "r", url: server.url("/r.mp3"), destination: .directory(folder.path))) }
        try await eventually("the attempt ended, its file waiting for the worker") { try await manager.peek { $0.state(of: "r")?.isPlacing } == true }
        let removal = Task { try await manager.remove("r", deleteFile: true) }
        try await eventually("the removal waiting for the file to land") {
            try await manager.peek { $0.state(of: "r")?.pending } == .removal(deleteFile: true)
        }
        removalAsked.open()
        try await removal.value
        _ = try await enqueued.value
        try await eventually("the lock let go") { held.withLock { $0 != nil } }
        try #require(held.withLock { $0 }).get()
        try await eventually("the download gone, and its file") {
            try await manager.download(withID: "r") == nil && folder.contents().isEmpty
        }
        await manager.shutdown()
        #expect(try Database(path: database).scalarInt("SELECT count(*) FROM downloads") == 0)
    }
}

/// Naming an unnamed file: by descriptor where the kernel lets its opener (Linux 6.10), through
/// /proc where it does not; both give the file its name with its bytes, and neither names it
/// over a file already there.
@Suite struct UnnamedFileNamingTests {
    @Test(arguments: [false, true]) func anUnnamedFileIsNamedWithItsBytesAndNeverOverAnother(throughProc: Bool) throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let directory = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(directory >= 0)
        defer { close(directory) }
        try Data("the user's".utf8).write(to: URL(filePath: folder.file("taken.mp3")))
        let fd = WholeFile.openUnnamed(in: directory)
        try #require(fd >= 0, "this file system has unnamed files")
        defer { close(fd) }
        let body = Array("the episode".utf8)
        #expect(write(fd, body, body.count) == body.count)

        let refused = WholeFile.name(fd, in: directory, as: "taken.mp3", throughProc: throughProc)
        let error = errno
        #expect(refused == -1 && error == EEXIST)
        #expect(WholeFile.name(fd, in: directory, as: "episode.mp3", throughProc: throughProc) == 0)
        #expect(try String(contentsOfFile: folder.file("episode.mp3"), encoding: .utf8) == "the episode")
        #expect(try String(contentsOfFile: folder.file("taken.mp3"), encoding: .utf8) == "the user's")
    }
}

extension WholeFileTests {
    /// Another process holds the database from the first request of more small files than the
    /// buffers' budget holds, four at a time: the files whose bodies came whole wait for the disk worker without holding a slot,
    /// so downloads go on until their bodies fill the buffers' budget; then the next ones wait in
    /// curl, holding their slots, and memory stays within the budget. All land exact.
    @Test func wholeFilesWaitingForTheWorkerHoldNoSlotButStayWithinTheBudget() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        let settled = Gate()   // a flag: the holder lets go once it opens
        defer { settled.open(); folder.remove(); home.remove(); server.stop() }
        let size = 100_000
        let count = EarlyBudget.total / size + 20
        let bodies = (0..<count).map { Body.pattern(size: size, seed: UInt64(500 + $0)) }
        for (index, body) in bodies.enumerated() { server.setRoute("/s\(index).mp3", Route(body: body, contentType: "audio/mpeg")) }
        server.setRoute("/first.mp3", Route(body: .bytes(Array("first".utf8)), contentType: "audio/mpeg"))
        let database = home.file("queue.sqlite")
        // Time stands still for the engine: the disk's last measurement stays fresh, so starts are
        // planned without the (held) worker however long the test's turns take.
        var configuration = fastConfiguration(concurrency: 4)
        configuration.clock = ManualClock().clock
        let manager = try DownloadManager(configuration: configuration, databasePath: database, watchesOtherProcesses: false)
        // A first file, so the queue's identity (its first whole file makes it) is there already.
        _ = try await manager.enqueue(DownloadRequest(id: "first", url: server.url("/first.mp3"), destination: .directory(folder.path)))
        _ = try await waitFor(manager, "first", .completed)
        let requests: @Sendable () -> Int = { (0..<count).reduce(0) { $0 + server.requests(for: "/s\($1).mp3").count } }
        // The lock taken at the first request; once nothing more can start, the files asked for
        // less the ones already saved: those between wait in memory.
        let waiting = holdDatabase(database, once: { requests() > 0 }) { connection in
            guard block(until: { settled.isOpen }) else { throw Timeout(description: "the downloads never settled") }
            let asked = requests()
            return asked - (try connection.scalarInt("SELECT count(*) FROM downloads WHERE id LIKE 's%' AND status = 'completed'") ?? 0)
        }
        // Its own task: its answer may wait for the worker, which waits for the hold.
        let enqueued = Task {
            try await manager.enqueue(contentsOf: (0..<count).map {
                DownloadRequest(id: DownloadID("s\($0)"), url: server.url("/s\($0).mp3"), destination: .directory(folder.path))
            })
        }
        // Settled: every slot held by a body waiting in curl (the budget has no room for it), and
        // a turn of the loop after that, which would have started any download that could.
        try await eventually("every slot held by a body waiting in curl") {
            try await manager.peek { $0.waitingForParts.transfersHeldInCurl } == 4
        }
        let after = try await manager.peek { $0.waitingForParts }
        #expect(after.slotsTaken == 4 && after.transfersHeldInCurl == 4, "\(after)")
        settled.open()
        _ = try await enqueued.value
        for (index, body) in bodies.enumerated() {
            let done = try await waitFor(manager, DownloadID("s\(index)"), .completed, seconds: 60)
            #expect(done.filePath.map { sha256(ofFile: $0) } == body.sha256Hex())
        }
        let inMemory = try #require(waiting.withLock { $0 }).get()
        let budget = EarlyBudget.total
        // Whole files held slots before: then no more than the slots and as many again waited (8).
        #expect(inMemory >= budget / size, "the budget's worth of bodies came while the worker waited (\(inMemory))")
        #expect(inMemory <= budget / size + 1 + 4, "no more than the budget holds, and the four waiting in curl (\(inMemory))")
        #expect(folder.contents().filter { $0.hasSuffix(PartFile.suffix) } == [])
        await manager.shutdown()
    }
}
