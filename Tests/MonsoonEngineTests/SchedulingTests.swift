import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// Limits, priority and per-host backoff, as the server saw them.
@Suite struct SchedulingTests {
    @Test func curlBuffersShareFourMiBAcrossTheDownloadsThatMayRun() {
        #expect(EngineLoop.downloadBufferSize(concurrency: 1) == 256 << 10)
        #expect(EngineLoop.downloadBufferSize(concurrency: 16) == 256 << 10)
        #expect(EngineLoop.downloadBufferSize(concurrency: 32) == 128 << 10)
        #expect(EngineLoop.downloadBufferSize(concurrency: 1_000) == 64 << 10)
        #expect(EngineLoop.downloadBufferSize(concurrency: 0) == 256 << 10)
    }

    @Test func theGlobalLimitIsTheMostConnectionsTheServerSees() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        for index in 0..<8 {
            server.setRoute("/\(index)", Route(body: .pattern(size: 60_000, seed: UInt64(index)), throttle: 200_000))
        }
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 3))
        try await manager.enqueue(contentsOf: (0..<8).map { request(DownloadID("\($0)"), server.url("/\($0)"), to: folder.file("\($0).bin")) })
        await manager.waitUntilIdle()
        #expect(try await manager.downloads.allSatisfy { $0.status == .completed })
        #expect(server.maxConcurrentRequests == 3)
        await manager.shutdown()
    }

    @Test func thePerHostLimitHoldsPerHost() async throws {
        let one = try TestServer()
        let two = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); one.stop(); two.stop() }
        var requests: [DownloadRequest] = []
        for index in 0..<5 {
            for (name, server) in [("one", one), ("two", two)] {
                server.setRoute("/\(index)", Route(body: .pattern(size: 50_000, seed: UInt64(index)), throttle: 200_000))
                requests.append(request(DownloadID("\(name)\(index)"), server.url("/\(index)"), to: folder.file("\(name)\(index)")))
            }
        }
        var configuration = fastConfiguration(concurrency: 10)
        configuration.maxDownloadsPerHost = 2
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(contentsOf: requests)
        await manager.waitUntilIdle()
        #expect(try await manager.downloads.allSatisfy { $0.status == .completed })
        #expect(one.maxConcurrentRequests == 2)
        #expect(two.maxConcurrentRequests == 2)
        await manager.shutdown()
    }

    @Test func higherPriorityStartsFirstThenEnqueueOrder() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let priorities = [("a", 0), ("b", 5), ("c", 0), ("d", 9), ("e", 5)]
        for (name, _) in priorities { server.setRoute("/\(name)", Route(body: .bytes(Array(name.utf8)))) }
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 1))
        try await manager.enqueue(contentsOf: priorities.map { request(DownloadID($0.0), server.url("/\($0.0)"), to: folder.file($0.0), priority: $0.1) })
        await manager.waitUntilIdle()
        #expect(server.requests.map(\.path) == ["/d", "/b", "/e", "/a", "/c"])
        #expect(try await manager.downloads.map(\.id) == ["a", "b", "c", "d", "e"], "listed in enqueue order")
        await manager.shutdown()
    }

    @Test func aPriorityChangeAppliesToTheNextStart() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/slow", Route(body: .pattern(size: 400_000, seed: 1), throttle: 100_000))
        for name in ["a", "b", "c"] { server.setRoute("/\(name)", Route(body: .bytes(Array(name.utf8)))) }
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 1))
        let recorder = EventRecorder(manager)
        try await manager.enqueue(request("slow", server.url("/slow"), to: folder.file("slow")))
        try await recorder.waitFor("slow", .downloading)
        // Hold new starts (the running one goes on), so the test cannot be outrun by a slow machine.
        await manager.setLimits(maxConcurrent: 0)
        try await manager.enqueue(contentsOf: ["a", "b", "c"].map { request(DownloadID($0), server.url("/\($0)"), to: folder.file($0)) })
        try await manager.setPriority(10, for: "c")
        await manager.setLimits(maxConcurrent: 1)
        await manager.waitUntilIdle()
        #expect(try await manager.download(withID: "slow")?.status == .completed, "the running transfer was not interrupted")
        #expect(server.requests.map(\.path) == ["/slow", "/c", "/a", "/b"])
        await manager.shutdown()
    }

    @Test func a503HoldsBackThatHostOnly() async throws {
        let held = try TestServer()
        let other = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); held.stop(); other.stop() }
        held.setRoute("/first", Route(body: .bytes([1]), faults: [.status(503, times: 1, retryAfter: "5")]))
        held.setRoute("/second", Route(body: .bytes([2])))
        other.setRoute("/third", Route(body: .bytes([3])))
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 1))
        let recorder = EventRecorder(manager)
        try await manager.enqueue(request("first", held.url("/first"), to: folder.file("1")))
        try await recorder.waitFor("first", .waitingToRetry)
        try await manager.enqueue(contentsOf: [
            request("second", held.url("/second"), to: folder.file("2")),
            request("third", other.url("/third"), to: folder.file("3")),
        ])
        await manager.waitUntilIdle()
        let firstAt = try #require(held.requests(for: "/first").first?.time)
        let secondAt = try #require(held.requests(for: "/second").first?.time)
        let thirdAt = try #require(other.requests(for: "/third").first?.time)
        #expect(thirdAt < secondAt, "the other host went on")
        #expect(secondAt.timeIntervalSince(firstAt) >= 4.9, "the held host waited for its backoff")
        await manager.shutdown()
    }
}
