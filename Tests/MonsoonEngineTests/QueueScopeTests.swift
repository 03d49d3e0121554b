import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// `QueueScope.claimedOnly`: an engine that runs only its own downloads of a shared queue.
@Suite struct QueueScopeTests {
    func configuration(_ scope: QueueScope, concurrency: Int = 4) -> EngineConfiguration {
        var configuration = fastConfiguration(concurrency: concurrency)
        configuration.scope = scope
        return configuration
    }

    @Test func onlyEnqueuedAndClaimedDownloadsStart() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        for name in ["other", "waiting", "mine", "later"] { server.setRoute("/\(name)", Route(body: .pattern(size: 50_000, seed: UInt64(name.count)))) }
        // Another run's queue: two downloads queued and never started.
        do {
            let manager = try DownloadManager(configuration: configuration(.wholeQueue, concurrency: 0), databasePath: database)
            try await manager.enqueue(contentsOf: [request("other", server.url("/other"), to: folder.file("other")),
                                                   request("later", server.url("/later"), to: folder.file("later"))])
            await manager.shutdown()
        }
        let manager = try DownloadManager(configuration: configuration(.claimedOnly), databasePath: database, watchesOtherProcesses: false)
        try await manager.enqueue(request("mine", server.url("/mine"), to: folder.file("mine")))
        try await waitFor(manager, "mine", .completed)
        await manager.waitUntilIdle()
        #expect(server.requests(for: "/other").isEmpty && server.requests(for: "/later").isEmpty, "another run's downloads are left alone")
        #expect(try await manager.download(withID: "other")?.status == .queued)

        // A retry of an unclaimed download changes its state, but does not start it.
        try await manager.pause("other")
        try await manager.retry(["other"])
        #expect(try await manager.download(withID: "other")?.status == .queued)
        await manager.waitUntilIdle()
        #expect(server.requests(for: "/other").isEmpty)

        // Claimed, it runs; a priority change of an unclaimed one does not sneak it in.
        try await manager.setPriority(9, for: "later")
        try await manager.claim(["other"])
        try await waitFor(manager, "other", .completed)
        await manager.waitUntilIdle()
        #expect(server.requests(for: "/later").isEmpty)
        #expect(try await manager.download(withID: "later")?.status == .queued)
        await manager.shutdown()
        #expect(sha256(ofFile: folder.file("other")) == Body.pattern(size: 50_000, seed: 5).sha256Hex())
    }

    /// Downloads claimed as the engine opens (an archive's) start as the restore reads their rows, and
    /// the events from the opening tell all of it; the others stay queued, and a claim whose row the
    /// restore never met goes with it (a download added later under that id is not this engine's).
    @Test(.timeLimit(.minutes(1))) func downloadsClaimedAtOpeningStartAsTheRestoreTakesThemIn() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        let names = ["first", "second", "left"]
        for (index, name) in names.enumerated() { server.setRoute("/\(name)", Route(body: .pattern(size: 40_000, seed: UInt64(70 + index)))) }
        do {
            let manager = try DownloadManager(configuration: configuration(.wholeQueue, concurrency: 0), databasePath: database)
            try await manager.enqueue(contentsOf: names.map { request(DownloadID($0), server.url("/\($0)"), to: folder.file($0)) })
            await manager.shutdown()
        }
        let (manager, events) = try await DownloadManager.open(configuration: configuration(.claimedOnly), databasePath: database,
                                                               watchesOtherProcesses: false, claiming: ["first", "second", "never-added"])
        var seen: [DownloadID: [DownloadStatus]] = [:]
        for await event in events {
            if case .statusChanged(let download) = event { seen[download.id, default: []].append(download.status) }
            let ended: Set<DownloadStatus> = [.completed, .failed, .paused]
            if seen["first"]?.last.map(ended.contains) == true && seen["second"]?.last.map(ended.contains) == true { break }
        }
        #expect(seen["first"] == [.downloading, .completed] && seen["second"] == [.downloading, .completed], "\(seen)")
        for (index, name) in names.prefix(2).enumerated() {
            #expect(sha256(ofFile: folder.file(name)) == Body.pattern(size: 40_000, seed: UInt64(70 + index)).sha256Hex())
        }
        // A row added by another connection under the id claimed ahead, taken in: not claimed.
        let other = try DownloadStore(path: database)
        _ = try other.add([request("never-added", server.url("/left"), to: folder.file("late"))])
        try await manager.adoptStoredDownloads()
        await manager.waitUntilIdle()
        #expect(server.requests(for: "/left").isEmpty, "unclaimed downloads are left alone")
        #expect(try await manager.download(withID: "left")?.status == .queued)
        #expect(try await manager.download(withID: "never-added")?.status == .queued)
        await manager.shutdown()
    }

    @Test func claimsFromAnotherProcessAreHonouredOnlyWhileItLives() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        server.setRoute("/handed", Route(body: .bytes(Array("handed".utf8))))
        server.setRoute("/stale", Route(body: .bytes(Array("stale".utf8))))
        let manager = try DownloadManager(configuration: configuration(.claimedOnly), databasePath: database)
        let other = try DownloadStore(path: database)
        let ids = try other.add([DownloadRequest(id: "", url: server.url("/stale"), destination: .directory(folder.path)),
                                 DownloadRequest(id: "", url: server.url("/handed"), destination: .directory(folder.path))])
        try other.post([.adoptNewDownloads])
        // A process that has ended (a pid that cannot exist) and a living one (this one).
        try other.post([.claim(ids[0], by: Int32.max)])
        try other.post([.claim(ids[1], by: getpid())])
        try await waitFor(manager, ids[1], .completed)
        try await eventually("every command taken") { (try? other.hasPendingCommands()) == false }
        await manager.waitUntilIdle()
        #expect(server.requests(for: "/stale").isEmpty, "a dead process's claim starts nothing")
        #expect(try await manager.download(withID: ids[0])?.status == .queued)
        await manager.shutdown()
    }

    @Test func aReleasedDownloadStopsAndStaysQueuedWithItsPart() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        // Held mid-body: still running when it is released.
        server.setRoute("/slow", Route(body: .pattern(size: 2 << 20, seed: 3), etag: "\"s\"", gate: gate, gateAfter: 300_000))
        let manager = try DownloadManager(configuration: configuration(.claimedOnly), databasePath: database)
        let recorder = EventRecorder(manager)
        let other = try DownloadStore(path: database)
        let ids = try other.add([DownloadRequest(id: "", url: server.url("/slow"), destination: .file(folder.file("slow")))])
        try other.post([.adoptNewDownloads])
        try other.post([.claim(ids[0], by: getpid())])
        try await recorder.waitFor(ids[0], .downloading)
        try await eventually("some bytes") { (PartFile.size(at: folder.file("slow.part")) ?? 0) > 50_000 }
        try other.post([.release(ids[0], by: getpid())])
        try await recorder.waitFor(ids[0], .queued)
        await manager.waitUntilIdle()
        let download = try #require(try await manager.download(withID: ids[0]))
        #expect(download.status == .queued)
        #expect((PartFile.size(at: folder.file("slow.part")) ?? 0) > 50_000, "the part is kept for the next run")
        await manager.shutdown()
    }

    @Test func pauseAllReachesDownloadsOutsideTheScope() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let database = folder.file("queue.sqlite")
        let url = URL(string: "http://127.0.0.1:9/a")!
        do {
            let manager = try DownloadManager(configuration: configuration(.wholeQueue, concurrency: 0), databasePath: database)
            try await manager.enqueue(request("a", url, to: folder.file("a")))
            await manager.shutdown()
        }
        let manager = try DownloadManager(configuration: configuration(.claimedOnly, concurrency: 0), databasePath: database, watchesOtherProcesses: false)
        try await manager.pauseAll()
        #expect(try await manager.download(withID: "a")?.status == .paused)
        try await manager.resumeAll()
        #expect(try await manager.download(withID: "a")?.status == .queued)
        await manager.shutdown()
    }

    @Test func aRefetchIntoAFolderChoosesTheNameAgain() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        server.setRoute("/a.mp3", Route(body: .bytes(Array("episode".utf8))))
        try Data("the user's own file".utf8).write(to: URL(fileURLWithPath: folder.file("a.mp3")))
        let manager = try DownloadManager(configuration: configuration(.wholeQueue), databasePath: database)
        let id = try await manager.enqueue(DownloadRequest(id: "", url: server.url("/a.mp3"), destination: .directory(folder.path)))
        let first = try await waitFor(manager, id, .completed)
        #expect(first.filePath == folder.file("a (2).mp3"), "never over another file")
        try FileManager.default.removeItem(atPath: folder.file("a.mp3"))
        try FileManager.default.removeItem(atPath: folder.file("a (2).mp3"))
        try await manager.retry([id])
        let again = try await waitFor(manager, id, .completed)
        #expect(again.filePath == folder.file("a.mp3"), "the plain name, free again")
        #expect(folder.contents().filter { $0.hasPrefix("a") } == ["a.mp3"])
        await manager.shutdown()
    }

    /// `retry(_:claiming:)`, as `get` and `archive` ask for what they run again: a `.claimedOnly`
    /// engine claims and retries in one turn, so each starts with no claim of its own after; with an
    /// unknown id, nothing is claimed (a queued download claimed would start).
    @Test(.timeLimit(.minutes(1))) func aRetryThatClaimsStartsWhatItRetriesAndNothingElse() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        let seeds: [String: UInt64] = ["gone": 1, "broken": 2, "other": 3, "waiting": 4]
        for name in ["broken", "other"] { server.setRoute("/\(name)", Route.html(status: 404, "<html>no</html>")) }
        server.setRoute("/gone", Route(body: .pattern(size: 20_000, seed: 1)))
        do {
            let manager = try DownloadManager(configuration: configuration(.wholeQueue), databasePath: database)
            try await manager.enqueue(contentsOf: ["gone", "broken", "other"].map { request(DownloadID($0), server.url("/\($0)"), to: folder.file($0)) })
            try await waitFor(manager, "gone", .completed)
            try await waitFor(manager, "broken", .failed)
            try await waitFor(manager, "other", .failed)
            await manager.shutdown()
        }
        do {   // queued, never started
            let manager = try DownloadManager(configuration: configuration(.wholeQueue, concurrency: 0), databasePath: database)
            try await manager.enqueue(request("waiting", server.url("/waiting"), to: folder.file("waiting")))
            await manager.shutdown()
        }
        try FileManager.default.removeItem(atPath: folder.file("gone"))
        for (name, seed) in seeds { server.setRoute("/\(name)", Route(body: .pattern(size: 20_000, seed: seed))) }

        let manager = try DownloadManager(configuration: configuration(.claimedOnly), databasePath: database, watchesOtherProcesses: false)
        await #expect(throws: DownloadManagerError.notFound("nope")) { try await manager.retry(["waiting", "nope"], claiming: true) }
        try await manager.retry(["gone", "broken"], claiming: true)
        try await waitFor(manager, "gone", .completed)
        try await waitFor(manager, "broken", .completed)
        await manager.waitUntilIdle()
        #expect(try await manager.download(withID: "other")?.status == .failed, "neither claimed nor retried: left as it was")
        #expect(try await manager.download(withID: "waiting")?.status == .queued, "its command failed: not claimed")
        await manager.shutdown()
        #expect(server.requests(for: "/gone").count == 2 && server.requests(for: "/broken").count == 2 && server.requests(for: "/other").count == 1)
        #expect(server.requests(for: "/waiting").isEmpty)
        for name in ["gone", "broken"] {
            #expect(sha256(ofFile: folder.file(name)) == Body.pattern(size: 20_000, seed: seeds[name]!).sha256Hex(), "\(name)")
        }
    }

    /// `retry` takes many downloads in one command (a `get` or an archive run asks again for all
    /// of its own): each is treated as alone, twice the same is once, and an unknown id changes nothing.
    @Test func aRetryOfManyTreatsEachAsAlone() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let seeds: [String: UInt64] = ["kept": 1, "gone": 2, "broken": 3]
        for (name, seed) in seeds { server.setRoute("/\(name)", Route(body: .pattern(size: 20_000, seed: seed))) }
        server.setRoute("/broken", Route.html(status: 404, "<html>no</html>"))
        let manager = try DownloadManager(configuration: configuration(.wholeQueue), databasePath: folder.file("queue.sqlite"))
        try await manager.enqueue(contentsOf: ["kept", "gone", "broken"].map { request(DownloadID($0), server.url("/\($0)"), to: folder.file($0)) })
        try await waitFor(manager, "kept", .completed)
        try await waitFor(manager, "gone", .completed)
        try await waitFor(manager, "broken", .failed)
        try FileManager.default.removeItem(atPath: folder.file("gone"))
        server.setRoute("/broken", Route(body: .pattern(size: 20_000, seed: 3)))

        await #expect(throws: DownloadManagerError.notFound("nope")) { try await manager.retry(["broken", "nope"]) }
        #expect(try await manager.download(withID: "broken")?.status == .failed, "nothing changed")
        try await manager.retry([])

        try await manager.retry(["kept", "gone", "broken", "gone"])
        try await waitFor(manager, "gone", .completed)
        try await waitFor(manager, "broken", .completed)
        await manager.waitUntilIdle()
        await manager.shutdown()
        #expect(server.requests(for: "/kept").count == 1, "a file still there is not fetched again")
        #expect(server.requests(for: "/gone").count == 2 && server.requests(for: "/broken").count == 2)
        for (name, seed) in seeds {
            #expect(sha256(ofFile: folder.file(name)) == Body.pattern(size: 20_000, seed: seed).sha256Hex(), "\(name)")
        }
    }
}

/// When starting a part over must be flushed before its first byte.
@Suite struct CheckpointResetTests {
    @Test func onlyARealCheckpointNeedsADurableReset() {
        var fresh = DownloadRecord(request: request("a", URL(string: "http://127.0.0.1:9/a")!, to: "/tmp/a"), sequence: 1, host: "h")
        fresh.startPartOver(epoch: 1)
        #expect(!fresh.checkpointResetPending, "nothing on disk to undo: an ordinary commit does")
        var resumed = fresh
        resumed.checkpoint = 4 << 20
        resumed.startPartOver(epoch: 2)
        #expect(resumed.checkpointResetPending && resumed.checkpoint == 0 && resumed.partEpoch == 2)
    }
}

/// What happens at shutdown and restore, whatever failed.
@Suite struct ShutdownAndRestoreTests {
    @Test func shutdownClosesEveryConnection() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let database = folder.file("queue.sqlite")
        func openDescriptors() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).filter { name in
                ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) ?? "").hasPrefix(database)
            }.count
        }
        let manager = try DownloadManager(configuration: fastConfiguration(concurrency: 0), databasePath: database, watchesOtherProcesses: true)
        _ = try await manager.counts()
        #expect(openDescriptors() > 0)
        await manager.shutdown()
        #expect(openDescriptors() == 0, "the transfer thread's and the watcher's connections are closed")
    }

    @Test func onlyAKnownOtherBootIsAReboot() {
        #expect(!BootID.rebooted(since: nil), "nothing stored (or a failed read): no reboot")
        if let current = BootID.current {
            #expect(!BootID.rebooted(since: current))
            #expect(BootID.rebooted(since: current + "-other"))
        }
    }
}

/// A database that fails is an error, never "not found" or "nothing to do".
@Suite struct StoreFailureTests {
    @Test func aFailingStoreIsReportedNotTakenForEmpty() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let database = folder.file("queue.sqlite")
        let manager = try DownloadManager(configuration: fastConfiguration(concurrency: 0), databasePath: database, watchesOtherProcesses: false)
        try await manager.enqueue(request("a", URL(string: "http://127.0.0.1:9/a")!, to: folder.file("a")))
        #expect(try await manager.download(withID: "a") != nil)
        #expect(try await manager.download(withID: "zz") == nil, "an unknown id is not found")
        // Another program breaks the database under the running engine.
        let other = try Database(path: database)
        try other.execute("ALTER TABLE downloads RENAME TO broken")
        await #expect(throws: DownloadManagerError.self) { _ = try await manager.download(withID: "zz") }
        await #expect(throws: DownloadManagerError.self) { try await manager.resumeAll() }
        await manager.shutdown()
    }
}
