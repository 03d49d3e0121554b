import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// What the engine tells about each request (for run reports) and the limits a run sets.
@Suite struct AttemptReportTests {
    @Test func attemptsReportStatusBytesConnectionsAndResumes() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 300_000, seed: 1)
        server.setRoute("/a", Route(body: body, etag: "\"a\"", faults: [.dropAfter(bytes: 100_000, times: 1)]))
        server.setRoute("/b", Route(body: .bytes([1, 2, 3])))
        server.setRoute("/moved", Route(body: .bytes([]), faults: [.redirect(to: "/b", status: 301)]))
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 1))
        let recorder = EventRecorder(manager)
        try await manager.enqueue(request("a", server.url("/a"), to: folder.file("a")))
        try await waitFor(manager, "a", .completed)
        try await manager.enqueue(request("m", server.url("/moved"), to: folder.file("m")))
        let moved = try await waitFor(manager, "m", .completed)
        #expect(moved.finalURL == server.url("/b").absoluteString)
        await manager.waitUntilIdle()
        func reports() -> [AttemptReport] {
            recorder.all.compactMap { event -> AttemptReport? in
                if case .attempt(let report) = event { return report }
                return nil
            }
        }
        try await eventually("the redirect's report recorded") { reports().contains { $0.id == "m" } }
        let reports = reports()
        let a = reports.filter { $0.id == "a" }
        #expect(a.count == 2, "dropped once, then resumed")
        #expect(a[0].status == 200 && a[0].error != nil && a[0].resumedFrom == 0 && a[0].newConnections == 1)
        #expect(a[1].status == 206 && a[1].error == nil && a[1].resumedFrom == a[0].bytes && a[0].bytes + a[1].bytes == 300_000)
        #expect(a.allSatisfy { ($0.timeToFirstByte ?? 0) > 0 && $0.duration >= ($0.timeToFirstByte ?? 0) })
        #expect(reports.first { $0.id == "m" }?.status == 200, "the final response of the redirect")
        #expect(reports.allSatisfy { $0.host == "127.0.0.1:\(server.port)" })
        await manager.shutdown()
    }

    @Test func aFileOverTheLimitFailsWithoutBeingWritten() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/big", Route(body: .pattern(size: 200_000, seed: 2)))
        var configuration = fastConfiguration()
        configuration.maxFileBytes = 100_000
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(request("big", server.url("/big"), to: folder.file("big")))
        let failed = try await waitFor(manager, "big", .failed)
        #expect(failed.lastError?.code == .tooLarge)
        #expect(failed.lastError?.message.contains("the server says the file is 195 KiB, larger than this download's limit of 98 KiB; refused") == true)
        #expect(folder.contents().isEmpty, "no file, no part")
        await manager.shutdown()
    }
}

/// `.discard`: bodies counted and hashed, nothing written.
@Suite struct DiscardTests {
    @Test func aDiscardedBodyIsCountedAndHashed() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 700_000, seed: 5)
        server.setRoute("/a", Route(body: body, faults: [.dropAfter(bytes: 300_000, times: 1)]))
        let manager = DownloadManager(configuration: fastConfiguration())
        let id = try await manager.enqueue(DownloadRequest(id: "", url: server.url("/a"), destination: .discard(checksum: true)))
        let done = try await waitFor(manager, id, .completed)
        #expect(done.bytes == 700_000 && done.checksum == body.sha256Hex(), "a dropped attempt starts over: the hash is of the whole body")
        #expect(done.filePath == nil && folder.contents().isEmpty)
        await manager.shutdown()
        let stored = try DownloadManager(configuration: fastConfiguration(), databasePath: folder.file("queue.sqlite"))
        await #expect(throws: DownloadManagerError.self) {
            try await stored.enqueue(DownloadRequest(id: "", url: server.url("/a"), destination: .discard(checksum: false)))
        }
        await stored.shutdown()
    }
}
