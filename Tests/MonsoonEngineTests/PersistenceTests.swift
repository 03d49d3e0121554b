import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// The queue in SQLite: restoring it, and what survives a relaunch.
@Suite struct PersistenceTests {
    func idleConfiguration() -> EngineConfiguration {
        var configuration = fastConfiguration()
        configuration.maxConcurrentDownloads = 0   // nothing starts: the queue only
        return configuration
    }

    @Test func orderPriorityUserInfoAndDuplicatesSurviveARelaunch() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let database = folder.file("queue.sqlite")
        let url = URL(string: "http://127.0.0.1:9/a.mp3")!
        do {
            let manager = try DownloadManager(configuration: idleConfiguration(), databasePath: database)
            var first = DownloadRequest(id: "x", url: url, destination: .file(folder.file("x")), priority: 2, expectedSize: 1234, expectedMediaType: "audio/mpeg",
                                        headers: ["User-Agent": "Test/1"], userInfo: ["episode": "42", "feed": "é"])
            first.userInfo["empty"] = ""
            let ids = try await manager.enqueue(contentsOf: [
                first,
                DownloadRequest(id: "", url: url, destination: .directory(folder.file("dir"))),
                DownloadRequest(id: "", url: url, destination: .directory(folder.file("dir2")), priority: 5),
            ])
            #expect(ids[0] == "x")
            #expect(ids[1].rawValue.hasPrefix("d") && ids[2].rawValue.hasPrefix("d") && ids[1] != ids[2])
            try await manager.pause(ids[2])
            await manager.shutdown()
        }
        let manager = try DownloadManager(configuration: idleConfiguration(), databasePath: database)
        let restored = try await manager.downloads
        #expect(restored.count == 3)
        #expect(restored[0].id == "x")
        #expect(restored[0].request.userInfo == ["episode": "42", "feed": "é", "empty": ""])
        #expect(restored[0].request.headers == ["User-Agent": "Test/1"])
        #expect(restored[0].request.priority == 2 && restored[0].request.expectedSize == 1234 && restored[0].request.expectedMediaType == "audio/mpeg")
        #expect(restored.map(\.status) == [.queued, .queued, .paused])
        #expect(restored[2].request.priority == 5)
        await #expect(throws: DownloadManagerError.duplicate("x")) {
            try await manager.enqueue(DownloadRequest(id: "x", url: url, destination: .file(folder.file("y"))))
        }
        await manager.shutdown()
    }

    @Test func everyStateComesBack() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        let body = Body.pattern(size: 1 << 20, seed: 5)
        server.setRoute("/done", Route(body: .bytes([1, 2, 3])))
        server.setRoute("/missing", Route.html(status: 404, "<html>no</html>"))
        server.setRoute("/busy", Route(body: .bytes([1]), faults: [.status(503, times: 1, retryAfter: "60")]))
        // Held mid-body: still running at the shutdown.
        server.setRoute("/slow", Route(body: body, etag: "\"s\"", gate: gate, gateAfter: 300_000))
        do {
            var configuration = fastConfiguration()
            configuration.retry.maxDelay = 120
            let manager = try DownloadManager(configuration: configuration, databasePath: database)
            let recorder = EventRecorder(manager)
            try await manager.enqueue(contentsOf: [
                request("done", server.url("/done"), to: folder.file("done")),
                request("missing", server.url("/missing"), to: folder.file("missing")),
                request("busy", server.url("/busy"), to: folder.file("busy")),
                request("slow", server.url("/slow"), to: folder.file("slow")),
            ])
            try await recorder.waitFor("done", .completed)
            try await recorder.waitFor("missing", .failed)
            try await recorder.waitFor("busy", .waitingToRetry)
            try await eventually("part of slow") { (try await manager.download(withID: "slow")?.bytes ?? 0) > 100_000 }
            await manager.shutdown()
        }
        let partSize = PartFile.size(at: folder.file("slow.part")) ?? 0
        #expect(partSize > 100_000 && partSize < 1 << 20)

        server.setRoute("/slow", Route(body: body, etag: "\"s\""))
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database)
        let restored = Dictionary(uniqueKeysWithValues: try await manager.downloads.map { ($0.id, $0) })
        #expect(restored["done"]?.status == .completed)
        #expect(restored["missing"]?.status == .failed)
        #expect(restored["missing"]?.lastError?.httpStatus == 404)
        #expect(restored["busy"]?.status == .waitingToRetry)
        #expect((restored["busy"]?.retryAt ?? .distantPast) > Date().addingTimeInterval(30), "the retry time is kept")
        try await waitFor(manager, "slow", .completed)
        #expect(sha256(ofFile: folder.file("slow")) == body.sha256Hex())
        #expect(server.requests(for: "/slow").last?.header("Range") == "bytes=\(partSize)-")
        #expect(server.requests(for: "/done").count == 1, "completed stays completed")
        await manager.shutdown()
        let store = try DownloadStore(path: database)
        #expect(try store.database.integrityCheck() == "ok")
    }

    @Test func afterARebootAPartIsCutBackToItsCheckpoint() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        let body = Body.pattern(size: 300_000, seed: 6)
        server.setRoute("/p", Route(body: body, etag: "\"p\""))
        let destination = folder.file("p.bin")
        // A queue as a power cut leaves it: 100,000 bytes known flushed, then garbage.
        do {
            let store = try DownloadStore(path: database)
            var record = DownloadRecord(request: request("p", server.url("/p"), to: destination), sequence: 0, host: "")
            record.restoreStatus(.downloading)
            record.filePath = destination
            record.checkpoint = 100_000
            record.bytes = 180_000
            record.total = 300_000
            record.resume = ResumeState(url: server.url("/p").absoluteString, etag: "\"p\"", lastModified: nil, total: 300_000)
            _ = try store.insert(record)
            try store.setMeta("boot_id", "a boot before the power cut")
        }
        var part = body.data().prefix(100_000)
        part.append(Data(repeating: 0xEE, count: 80_000))
        _ = FileManager.default.createFile(atPath: PartFile.path(for: destination), contents: part)

        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database)
        try await waitFor(manager, "p", .completed)
        #expect(sha256(ofFile: destination) == body.sha256Hex())
        #expect(server.requests(for: "/p").first?.header("Range") == "bytes=100000-")
        #expect(server.requests(for: "/p").first?.header("If-Range") == "\"p\"")
        await manager.shutdown()
    }

    /// A row that cannot be read after a reboot has a part nobody looked at: the stored boot id
    /// stays, so a later run (with the row mended) still cuts that part back.
    @Test func anUnreadableRowAfterARebootKeepsTheOldBootID() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let database = folder.file("queue.sqlite")
        do {
            let store = try DownloadStore(path: database)
            for (sequence, id) in ["good", "damaged"].enumerated() {
                let record = DownloadRecord(request: request(DownloadID(id), URL(string: "http://127.0.0.1:9/\(id)")!, to: folder.file(id)),
                                            sequence: sequence + 1, host: "")
                _ = try store.insert(record)
            }
            try store.database.execute("UPDATE downloads SET headers = '{not json' WHERE id = 'damaged'")
            try store.setMeta("boot_id", "a boot before the power cut")
        }
        var configuration = fastConfiguration()
        configuration.maxConcurrentDownloads = 0   // only the restore matters here
        let manager = try DownloadManager(configuration: configuration, databasePath: database)
        #expect(await manager.persistenceError() != nil, "the damaged row is reported")
        await manager.shutdown()
        #expect(try DownloadStore(path: database).meta("boot_id") == "a boot before the power cut")
    }

    @Test func withoutARebootThePartIsTrustedWhole() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        let body = Body.pattern(size: 300_000, seed: 7)
        server.setRoute("/q", Route(body: body, etag: "\"q\""))
        let destination = folder.file("q.bin")
        do {
            let store = try DownloadStore(path: database)
            var record = DownloadRecord(request: request("q", server.url("/q"), to: destination), sequence: 0, host: "")
            record.restoreStatus(.downloading)
            record.filePath = destination
            record.checkpoint = 0
            record.resume = ResumeState(url: server.url("/q").absoluteString, etag: "\"q\"", lastModified: nil, total: 300_000)
            _ = try store.insert(record)
            try store.setMeta("boot_id", BootID.current ?? "unknown")
        }
        _ = FileManager.default.createFile(atPath: PartFile.path(for: destination), contents: body.data().prefix(120_000))
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database)
        try await waitFor(manager, "q", .completed)
        #expect(sha256(ofFile: destination) == body.sha256Hex())
        #expect(server.requests(for: "/q").first?.header("Range") == "bytes=120000-", "a killed process's bytes are all kept")
        await manager.shutdown()
    }

    /// At a clean stop the running part is flushed (off the transfer thread) and what it holds
    /// saved as its checkpoint, so even a reboot right after keeps every byte.
    @Test func aCleanStopFlushesThePartAndSavesItAsTheCheckpoint() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        // Held mid-body: still running at the stop.
        server.setRoute("/s", Route(body: .pattern(size: 4 << 20, seed: 9), etag: "\"s\"", gate: gate, gateAfter: 300_000))
        var configuration = fastConfiguration()
        configuration.checkpoint = EngineConfiguration.Checkpoint(bytes: 64 << 20, seconds: 3600)   // none while it runs: only the stop's
        let manager = try DownloadManager(configuration: configuration, databasePath: database)
        let destination = folder.file("s.bin")
        try await manager.enqueue(request("s", server.url("/s"), to: destination))
        try await eventually("some bytes") { (try await manager.download(withID: "s")?.bytes ?? 0) > 200_000 }
        await manager.shutdown()
        let part = LocalFile.size(at: PartFile.path(for: destination)) ?? 0
        let store = try DownloadStore(path: database)
        #expect(part > 200_000)
        #expect(try store.database.scalarInt("SELECT checkpoint FROM downloads WHERE id = 's'") == part, "the part as flushed at the stop")
        #expect(try store.database.scalarText("SELECT status FROM downloads WHERE id = 's'") == "queued")
    }

    @Test func checkpointsAreSavedWhileDownloading() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        // Paced: a checkpoint is saved with the progress, once a second while bytes come.
        server.setRoute("/c", Route(body: .pattern(size: 2 << 20, seed: 8), etag: "\"c\"", throttle: 600_000))
        var configuration = fastConfiguration()
        configuration.checkpoint = EngineConfiguration.Checkpoint(bytes: 256 << 10, seconds: 0.5)
        let manager = try DownloadManager(configuration: configuration, databasePath: database)
        try await manager.enqueue(request("c", server.url("/c"), to: folder.file("c")))
        let store = try DownloadStore(path: database)
        try await eventually("a checkpoint saved") {
            (try? store.database.scalarInt("SELECT checkpoint FROM downloads WHERE id = 'c'")).flatMap { $0 } ?? 0 >= 256 << 10
        }
        let saved = try store.database.scalarInt("SELECT bytes FROM downloads WHERE id = 'c'") ?? 0
        #expect(saved > 0, "progress is saved while running")
        await manager.shutdown()
    }

    @Test func commandsFromAnotherConnectionApply() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        let body = Body.pattern(size: 1 << 20, seed: 9)
        // Held mid-body until the other connection has paused it.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/r", Route(body: body, etag: "\"r\"", gate: gate, gateAfter: 300_000))
        server.setRoute("/added", Route(body: .bytes([4, 2])))
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database)
        let recorder = EventRecorder(manager)
        try await manager.enqueue(request("r", server.url("/r"), to: folder.file("r")))
        try await recorder.waitFor("r", .downloading)
        try await eventually("some bytes on disk") { (try await manager.download(withID: "r")?.bytes ?? 0) > 0 }

        let other = try DownloadStore(path: database)   // as another process would
        try other.post([.pause("r")])
        try await recorder.waitFor("r", .paused, seconds: 10)
        server.setRoute("/r", Route(body: body, etag: "\"r\""))
        try other.post([.setPriority("r", 7)])
        try other.post([.resume("r")])
        let ids = try other.add([DownloadRequest(id: "", url: server.url("/added"), destination: .directory(folder.path))])
        try other.post([.adoptNewDownloads])
        try await recorder.waitFor("r", .completed, seconds: 20)
        try await recorder.waitFor(ids[0], .completed, seconds: 20)
        #expect(try await manager.download(withID: "r")?.request.priority == 7)
        #expect(sha256(ofFile: folder.file("r")) == body.sha256Hex())
        #expect(server.requests(for: "/r").last?.header("Range") != nil)
        try other.post([.remove("r", deleteFile: true)])
        try await eventually("removed") { try await manager.download(withID: "r") == nil }
        #expect(!FileManager.default.fileExists(atPath: folder.file("r")))
        #expect(try other.download(withID: "r") == nil)
        await manager.shutdown()
    }

    @Test func manyCommandsFromAnotherConnectionApplyInOrderAChunkAtATime() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let database = folder.file("queue.sqlite")
        // Nothing starts: only the commands change the queue.
        let manager = try DownloadManager(configuration: fastConfiguration(concurrency: 0), databasePath: database)
        let url = URL(string: "http://127.0.0.1:9/x")!
        let ids = try await manager.enqueue(contentsOf: (0..<1_200).map { request(DownloadID("q\($0)"), url, to: folder.file("q\($0)")) })
        let other = try DownloadStore(path: database)   // as another process would
        // One row damaged on disk: its command finds no download, and holds back none of the others.
        // Past the rows this engine keeps in memory from its enqueue (`freshLimit`), which its
        // saves would write whole again: this one is read.
        try other.database.execute("UPDATE downloads SET status = 'bogus' WHERE id = 'q1100'")
        for id in ids { try other.post([.setPriority(id, 1)]) }
        try other.post([.setPriority(ids[0], 5)])
        try other.post([.pause(ids[1_199])])
        let last = try other.post([.setPriority(ids[0], 9)])
        try await eventually(seconds: 30, "every command applied and deleted") { try !other.hasPendingCommands(through: last) }
        try await eventually(seconds: 10, "the last command's effect") { try await manager.download(withID: ids[0])?.request.priority == 9 }
        // Every setPriority but the damaged row's (and the first's, now 9), however the watcher batched them.
        try await eventually(seconds: 10, "the rows saved") {
            try other.database.scalarInt("SELECT count(*) FROM downloads WHERE priority = 1") == 1_198
        }
        #expect(await manager.persistenceError() != nil, "the damaged row is reported")
        #expect(try await manager.download(withID: ids[1_199])?.status == .paused)
        await manager.shutdown()
    }

    @Test func rowsAddedByAnotherProcessAreAdoptedEvenAfterOwnEnqueues() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let database = folder.file("queue.sqlite")
        let manager = try DownloadManager(configuration: idleConfiguration(), databasePath: database, watchesOtherProcesses: false)
        let other = try DownloadStore(path: database)
        let url = URL(string: "http://127.0.0.1:9/x")!
        let theirs = try other.add([DownloadRequest(id: "", url: url, destination: .directory(folder.file("a")))])
        // Before any adopt command arrives, this process enqueues its own: numbering must not
        // collide, and the other's row must not be skipped.
        let mine = try await manager.enqueue(contentsOf: [
            DownloadRequest(id: "d2", url: url, destination: .directory(folder.file("b"))),
            DownloadRequest(id: "", url: url, destination: .directory(folder.file("c"))),
        ])
        #expect(theirs == ["d1"])
        #expect(mine[0] == "d2" && mine[1] != "d1" && mine[1] != "d2")
        let ids = try await manager.downloads.map(\.id)
        #expect(Set(ids) == Set(theirs + mine))
        #expect(try await manager.counts()[.queued] == 3)
        await manager.shutdown()
    }

    /// An enqueue is answered by its own insert: another download's save failing in the same commit
    /// (on a full disk, say) is that download's failure, reported as such, and not the enqueue's,
    /// whose rows are in. Told otherwise, `get` would count a batch it queued as not queued.
    @Test func anEnqueueIsAnsweredByItsOwnInsertNotByAnotherDownloadsFailedSave() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let database = folder.file("queue.sqlite")
        let manager = try DownloadManager(configuration: idleConfiguration(), databasePath: database, watchesOtherProcesses: false)
        #expect(try await manager.counts().isEmpty, "restored before the other process adds its row")
        let other = try DownloadStore(path: database)
        let url = URL(string: "http://127.0.0.1:9/x")!
        let theirs = try other.add([DownloadRequest(id: "theirs", url: url, destination: .directory(folder.file("a")))])
        // Left downloading by a process that was killed: taken in with the enqueue below, it is queued
        // again and saved so in the enqueue's turn; that save fails.
        try other.database.execute("UPDATE downloads SET status = 'downloading' WHERE id = 'theirs'")
        try other.database.execute("CREATE TRIGGER refuse BEFORE UPDATE ON downloads WHEN OLD.id = 'theirs' BEGIN SELECT RAISE(ABORT, 'the disk is full'); END")

        let mine = try await manager.enqueue(contentsOf: [DownloadRequest(id: "mine", url: url, destination: .directory(folder.file("b")))])
        #expect(mine == ["mine"])
        #expect(try other.download(withID: "mine")?.status == .queued)
        #expect(theirs == ["theirs"])
        #expect(try other.download(withID: "theirs")?.status == .downloading, "its save failed")
        let failure = try #require(await manager.persistenceError())
        #expect("\(failure)".contains("the disk is full"), "and is reported: \(failure)")
        await manager.shutdown()
    }
}

/// The queue is restored by the disk worker, not on the transfer thread.
@Suite struct RestoreTests {
    /// While another connection holds the database's write lock, the restore waits for it; the
    /// transfer thread does not: a fetch is answered meanwhile, and a command posted meanwhile
    /// waits behind the restore and then finds the download restored.
    @Test func fetchesGoOnWhileTheRestoreWaitsForTheDatabase() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/feed.xml", Route(body: .bytes(Array("<rss/>".utf8))))
        let database = folder.file("queue.sqlite")
        var configuration = fastConfiguration()
        configuration.maxConcurrentDownloads = 0
        do {
            let manager = try DownloadManager(configuration: configuration, databasePath: database, watchesOtherProcesses: false)
            try await manager.enqueue(request("a", URL(string: "http://127.0.0.1:9/a")!, to: folder.file("a")))
            await manager.shutdown()
        }
        let holder = try Database(path: database)
        try holder.execute("BEGIN IMMEDIATE")   // the restore's transaction waits for this one
        let manager = try DownloadManager(configuration: configuration, databasePath: database, watchesOtherProcesses: false)
        async let paused: Void = manager.pause("a")   // waits behind the restore, on the disk worker
        let response = try await manager.fetch(FetchRequest(url: server.url("/feed.xml")))
        #expect(response.status == 200, "answered while the restore still waits for the lock")
        try holder.execute("COMMIT")
        try await paused
        #expect(try await manager.download(withID: "a")?.status == .paused)
        #expect(await manager.persistenceError() == nil, "the restore waited for the lock, and got it")
        await manager.shutdown()
    }
}
