import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// The transfer thread only transfers: what blocks the database or the disk worker never
/// stops bytes from arriving.
@Suite struct TransferThreadTests {
    @Test func aLockedDatabaseDoesNotStallRunningTransfers() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let body = Body.pattern(size: 3 << 20, seed: 11)
        // Held mid-body until the lock is taken: the rest comes while it is held.
        server.setRoute("/slow.bin", Route(body: body, etag: "\"s\"", gate: gate, gateAfter: 300_000))
        let database = folder.file("queue.sqlite")
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database)
        let part = folder.file("slow.bin.part")
        // Another process takes the database's write lock as soon as the part has bytes, and holds
        // it: every save waits. A thread of its own takes it and watches the part, because in the
        // full suite this test's task may wait seconds for a turn.
        let grown = holdDatabase(database, begin: "BEGIN EXCLUSIVE", once: { (PartFile.size(at: part) ?? 0) > 0 }) { _ in
            let before = PartFile.size(at: part) ?? 0
            gate.open()
            block { (PartFile.size(at: part) ?? 0) >= before + 512 * 1024 }
            return (before: before, after: PartFile.size(at: part) ?? 0)
        }
        try await manager.enqueue(request("s", server.url("/slow.bin"), to: folder.file("slow.bin")))
        try await eventually(seconds: 40, "the lock held and let go") { grown.withLock { $0 != nil } }
        let (before, after) = try #require(grown.withLock { $0 }).get()
        #expect(after >= before + 512 * 1024, "\(after - before) bytes arrived while the database was locked (from \(before))")

        let done = try await waitFor(manager, "s", .completed)
        #expect(done.bytes == body.count)
        #expect(sha256(ofFile: folder.file("slow.bin")) == body.sha256Hex())
        #expect(await manager.persistenceError() == nil)
        await manager.shutdown()
    }

    @Test func aBodilessSuccessMakesAnEmptyFileThroughTheDiskWorker() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/empty.txt", Route(body: .bytes([])))
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: folder.file("queue.sqlite"))
        try await manager.enqueue(DownloadRequest(id: "e", url: server.url("/empty.txt"), destination: .directory(folder.path)))
        let done = try await waitFor(manager, "e", .completed)
        #expect(done.filePath == folder.file("empty.txt"))
        #expect(PartFile.size(at: folder.file("empty.txt")) == 0)
        #expect(!PartFile.exists(folder.file("empty.txt.part")))
        await manager.shutdown()
    }

    @Test func aRemovedDownloadIsNotBroughtBackByACommandInTheSameTurn() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/x.bin", Route(body: .bytes([1, 2, 3])))
        var configuration = fastConfiguration()
        configuration.maxConcurrentDownloads = 0   // at rest: only in the database
        let manager = try DownloadManager(configuration: configuration, databasePath: folder.file("queue.sqlite"))
        try await manager.enqueue(request("x", server.url("/x.bin"), to: folder.file("x.bin")))
        try await manager.pause("x")
        // Both read the row before either changes it; the removal must win.
        async let removed: Void = manager.remove("x")
        async let resumed: Void = manager.resume("x")
        try await removed
        _ = try? await resumed   // not found, or done before the removal: either is fine
        #expect(try await manager.download(withID: "x") == nil)
        await manager.setLimits(maxConcurrent: 4)
        await manager.waitUntilIdle()
        #expect(try await manager.downloads.isEmpty)
        #expect(!server.requests.contains { $0.path == "/x.bin" })
        await manager.shutdown()
    }

    @Test func aReplacementThatCannotBeAddedLeavesTheOldDownload() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var configuration = fastConfiguration()
        configuration.maxConcurrentDownloads = 0
        let manager = try DownloadManager(configuration: configuration, databasePath: folder.file("queue.sqlite"))
        let url = URL(string: "http://127.0.0.1:9/a.mp3")!
        try await manager.enqueue(request("a", url, to: folder.file("a.mp3")))
        try await manager.enqueue(request("b", url, to: folder.file("b.mp3")))
        // "a" again, into the file "b" writes to: refused, and the old "a" stays as it was.
        await #expect(throws: DownloadManagerError.invalidRequest("a", "download b already writes to \(folder.file("b.mp3"))")) {
            try await manager.enqueue(request("a", url, to: folder.file("b.mp3")), replacingExisting: true)
        }
        let kept = try #require(try await manager.download(withID: "a"))
        #expect(kept.request.destination == .file(folder.file("a.mp3")))
        #expect(try await manager.downloads.map(\.id) == ["a", "b"])
        await manager.shutdown()
    }
}
