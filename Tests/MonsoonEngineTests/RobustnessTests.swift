import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// Edge cases that once hung or could corrupt: each is a regression test.
@Suite struct RobustnessTests {
    @Test func downloadsRefusedAtStartDoNotStallTheQueue() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        var configuration = fastConfiguration(concurrency: 1)
        configuration.diskReserve = Int.max / 4
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(contentsOf: (0..<5).map { request(DownloadID("\($0)"), server.url("/\($0)"), to: folder.file("\($0)")) })
        await manager.waitUntilIdle()
        #expect(try await manager.downloads.allSatisfy { $0.status == .queued && $0.lastError?.code == .notEnoughDiskSpace })
        #expect(server.requests.isEmpty)
        await manager.shutdown()
    }

    @Test func twoDownloadsCannotShareADestination() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let manager = DownloadManager(configuration: fastConfiguration())
        let url = URL(string: "http://127.0.0.1:9/a")!
        try await manager.enqueue(request("a", url, to: folder.file("same")))
        await #expect(throws: DownloadManagerError.invalidRequest("b", "download a already writes to \(folder.file("same"))")) {
            try await manager.enqueue(request("b", url, to: folder.file("same")))
        }
        await #expect(throws: DownloadManagerError.self) {
            try await manager.enqueue(contentsOf: [request("c", url, to: folder.file("x")), request("d", url, to: folder.file("x"))])
        }
        await manager.shutdown()
    }

    @Test func aServerThatIgnoresRangeAndDropsEveryTimeFailsInsteadOfLoopingForever() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let drops = (0..<20).map { _ in Fault.dropAfter(bytes: 100_000, times: 1) }
        server.setRoute("/loop", Route(body: .pattern(size: 500_000, seed: 1), etag: "\"l\"", supportsRanges: false, faults: drops))
        let manager = DownloadManager(configuration: fastConfiguration(retries: 3))
        try await manager.enqueue(request("loop", server.url("/loop"), to: folder.file("loop")))
        let failed = try await waitFor(manager, "loop", .failed)
        #expect(failed.lastError?.code == .truncated)
        // The first attempt made progress (not counted); then 3 retries that did not.
        #expect(server.requests(for: "/loop").count == 5)
        await manager.shutdown()
    }

    @Test func aServerErrorWithAHugeBodyIsStillRetriedByItsStatus() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 2 << 20, seed: 2)
        server.setRoute("/big-error", Route(body: body, faults: [.status(503, times: 1)]))
        server.setRoute("/huge-503", Route(body: .pattern(size: 3 << 20, seed: 3), status: 503, contentType: "text/html"))
        let manager = DownloadManager(configuration: fastConfiguration(retries: 1))
        try await manager.enqueue(request("h", server.url("/huge-503"), to: folder.file("h")))
        let failed = try await waitFor(manager, "h", .failed)
        #expect(failed.lastError?.httpStatus == 503)
        #expect(server.requests(for: "/huge-503").count == 2, "retried by its status, not failed as a write error")
        #expect(folder.contents().isEmpty)
        await manager.shutdown()
    }

    @Test func aConsumerThatStopsListeningIsUnsubscribed() async throws {
        let manager = DownloadManager(configuration: fastConfiguration())
        do {
            let events = manager.events()
            _ = events
            #expect(manager.hub.subscriberCount == 1)
        }
        #expect(manager.hub.subscriberCount == 0)
        await manager.shutdown()
        var afterShutdown = manager.events().makeAsyncIterator()
        #expect(await afterShutdown.next() == nil, "a stream made after shutdown ends at once")
    }

    @Test func commandsAfterShutdownAreRefused() async throws {
        let manager = DownloadManager(configuration: fastConfiguration())
        await manager.shutdown()
        await #expect(throws: DownloadManagerError.shutDown) {
            try await manager.enqueue(request("a", URL(string: "http://127.0.0.1:9/a")!, to: "/tmp/never"))
        }
        await manager.waitUntilIdle()
        await #expect(throws: DownloadManagerError.shutDown) { _ = try await manager.downloads }
        await #expect(throws: DownloadError.self) { _ = try await manager.fetch(FetchRequest(url: URL(string: "http://127.0.0.1:9/")!)) }
    }
}

@Suite struct SocketInheritanceTests {
    /// The TCP sockets of this process that a child would inherit.
    static func inheritableTCPSockets() -> Set<String> {
        let tcp = ((try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? "")
            + ((try? String(contentsOfFile: "/proc/net/tcp6", encoding: .utf8)) ?? "")
        var found = Set<String>()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let fd = Int32(name), let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                  target.hasPrefix("socket:[") else { continue }
            let inode = target.dropFirst(8).dropLast()
            guard tcp.contains(" \(inode) ") else { continue }
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 && flags & FD_CLOEXEC == 0 { found.insert(target) }
        }
        return found
    }

    /// What the multi handle lists to find the socket pair curl opens for `curl_multi_wakeup` (and
    /// mark it close-on-exec, which no curl option does): every descriptor open.
    @Test func theOpenDescriptorsAreListed() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        let listed = MultiHandle.openDescriptors()
        #expect(listed.contains(ends[0]) && listed.contains(ends[1]), "\(listed)")
    }

    /// A connection without close-on-exec would be inherited by any child process (a
    /// player, a converter), which then keeps a paused download's connection open.
    @Test func connectionsAreCloseOnExec() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        // Held mid-body: the connection stays open while the test looks at it.
        server.setRoute("/slow", Route(body: .pattern(size: 1 << 20, seed: 1), gate: gate, gateAfter: 100_000))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("s", server.url("/slow"), to: folder.file("s")))
        try await eventually("bytes arriving") { (try await manager.download(withID: "s")?.bytes ?? 0) > 0 }
        let inheritable = Self.inheritableTCPSockets()
        #expect(inheritable.isEmpty, "connections a child would inherit: \(inheritable)")
        await manager.shutdown()
    }
}
