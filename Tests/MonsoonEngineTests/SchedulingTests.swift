import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// Limits, priority and per-host backoff, as the server saw them.
@Suite struct SchedulingTests {
    @Test func curlBuffersShareFourMiBAcrossTheDownloadsThatMayRun() {
        #expect(TransferTable.downloadBufferSize(concurrency: 1) == 256 << 10)
        #expect(TransferTable.downloadBufferSize(concurrency: 16) == 256 << 10)
        #expect(TransferTable.downloadBufferSize(concurrency: 32) == 128 << 10)
        #expect(TransferTable.downloadBufferSize(concurrency: 1_000) == 64 << 10)
        #expect(TransferTable.downloadBufferSize(concurrency: 0) == 256 << 10)
    }

    @Test func theGlobalLimitIsTheMostConnectionsTheServerSees() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        // Every answer held until the limit's worth are in flight.
        for index in 0..<8 {
            server.setRoute("/\(index)", Route(body: .pattern(size: 60_000, seed: UInt64(index)), gate: gate))
        }
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 3))
        try await manager.enqueue(contentsOf: (0..<8).map { request(DownloadID("\($0)"), server.url("/\($0)"), to: folder.file("\($0).bin")) })
        try await eventually("three requests held") { server.requests.count == 3 }
        gate.open()
        await manager.waitUntilIdle()
        #expect(try await manager.downloads.allSatisfy { $0.status == .completed })
        #expect(server.maxConcurrentRequests == 3)
        await manager.shutdown()
    }

    @Test func thePerHostLimitHoldsPerHost() async throws {
        let one = try TestServer()
        let two = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); one.stop(); two.stop() }
        var requests: [DownloadRequest] = []
        // Every answer held until each host has its limit's worth in flight.
        for index in 0..<5 {
            for (name, server) in [("one", one), ("two", two)] {
                server.setRoute("/\(index)", Route(body: .pattern(size: 50_000, seed: UInt64(index)), gate: gate))
                requests.append(request(DownloadID("\(name)\(index)"), server.url("/\(index)"), to: folder.file("\(name)\(index)")))
            }
        }
        var configuration = fastConfiguration(concurrency: 10)
        configuration.maxDownloadsPerHost = 2
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(contentsOf: requests)
        try await eventually("two requests held on each host") { one.requests.count == 2 && two.requests.count == 2 }
        gate.open()
        await manager.waitUntilIdle()
        #expect(try await manager.downloads.allSatisfy { $0.status == .completed })
        #expect(one.maxConcurrentRequests == 2)
        #expect(two.maxConcurrentRequests == 2)
        await manager.shutdown()
    }

    /// A concurrency past the engine's limit is taken as the limit, and the manager says so (one
    /// below 0 as 0): the queue's read-ahead (twice the concurrency) once reserved room for that
    /// many rows, and a per-host limit kept a line.
    @Test func aHugeConcurrencyIsCappedAndTheLineStillRuns() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        var requests: [DownloadRequest] = []
        for index in 0..<4 {
            server.setRoute("/\(index)", Route(body: .pattern(size: 20_000, seed: UInt64(index))))
            requests.append(request(DownloadID("h\(index)"), server.url("/\(index)"), to: folder.file("h\(index)")))
        }
        var configuration = fastConfiguration(concurrency: Int.max)
        configuration.maxDownloadsPerHost = 1
        let manager = try await DownloadManager.open(configuration: configuration, databasePath: folder.file("queue.sqlite"))
        // What it reports is what it runs by.
        #expect(manager.configuration.maxConcurrentDownloads == EngineConfiguration.concurrencyLimit)
        let none = DownloadManager(configuration: fastConfiguration(concurrency: -3))
        #expect(none.configuration.maxConcurrentDownloads == 0)
        await none.shutdown()
        try await manager.enqueue(contentsOf: requests)
        await manager.waitUntilIdle()
        #expect(try await manager.downloads.allSatisfy { $0.status == .completed })
        #expect(server.maxConcurrentRequests == 1)
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
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        // Held mid-body until the others are queued and reordered.
        server.setRoute("/slow", Route(body: .pattern(size: 400_000, seed: 1), gate: gate, gateAfter: 100_000))
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
        gate.open()
        await manager.waitUntilIdle()
        #expect(try await manager.download(withID: "slow")?.status == .completed, "the running transfer was not interrupted")
        #expect(server.requests.map(\.path) == ["/slow", "/c", "/a", "/b"])
        await manager.shutdown()
    }

    /// A configuration of `concurrency` whose time is `time`'s: retry waits and holds pass when
    /// the test moves it, never by sleeping, so a loaded machine changes nothing.
    private func clocked(_ time: ManualClock, concurrency: Int) -> EngineConfiguration {
        var configuration = fastConfiguration(concurrency: concurrency)
        configuration.clock = time.clock
        return configuration
    }

    /// Moves `time` on by `seconds` and gives the loop a turn, which finds what became due.
    private func advance(_ time: ManualClock, by seconds: TimeInterval, _ manager: DownloadManager) async throws {
        time.advance(by: seconds)
        _ = try await manager.counts()
    }

    /// One download's 503 (one object whose origin failed) delays that download only: the next
    /// on the same host starts at once.
    @Test func oneDownloadsServiceUnavailableDelaysOnlyIt() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/first", Route(body: .bytes([1]), faults: [.status(503, times: 1, retryAfter: "4")]))
        server.setRoute("/second", Route(body: .bytes([2])))
        let time = ManualClock()
        let manager = DownloadManager(configuration: clocked(time, concurrency: 1))
        let recorder = EventRecorder(manager)
        try await manager.enqueue(request("first", server.url("/first"), to: folder.file("1")))
        let waiting = try await recorder.waitFor("first", .waitingToRetry)
        #expect(waiting.lastError?.message == "the server answered 503 Service Unavailable", "no hold: \(String(describing: waiting.lastError))")
        #expect(waiting.retryAt == time.now.addingTimeInterval(4))
        try await manager.enqueue(request("second", server.url("/second"), to: folder.file("2")))
        try await waitFor(manager, "second", .completed)   // the host was not held
        #expect(try await manager.download(withID: "first")?.status == .waitingToRetry, "the download itself waits for its Retry-After")
        #expect(server.requests(for: "/first").count == 1)
        try await advance(time, by: 4, manager)
        try await waitFor(manager, "first", .completed)
        #expect(server.requests(for: "/first").count == 2)
        await manager.shutdown()
    }

    /// 503s from two downloads on one host within the window hold that host (and say so); another
    /// host goes on.
    @Test func serviceUnavailableFromTwoDownloadsHoldsTheHost() async throws {
        let held = try TestServer()
        let other = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); held.stop(); other.stop() }
        held.setRoute("/a", Route(body: .bytes([1]), faults: [.status(503, times: 1, retryAfter: "4")]))
        held.setRoute("/b", Route(body: .bytes([2]), faults: [.status(503, times: 1, retryAfter: "4")]))
        held.setRoute("/c", Route(body: .bytes([3])))
        other.setRoute("/d", Route(body: .bytes([4])))
        let time = ManualClock()
        let manager = DownloadManager(configuration: clocked(time, concurrency: 1))
        let recorder = EventRecorder(manager)
        try await manager.enqueue(contentsOf: [request("a", held.url("/a"), to: folder.file("a")), request("b", held.url("/b"), to: folder.file("b"))])
        let first = try await recorder.waitFor("a", .waitingToRetry)
        let second = try await recorder.waitFor("b", .waitingToRetry)
        // Whichever 503 came second holds the host, and its retrying line says so.
        let message = [first, second].compactMap(\.lastError?.message).first { $0.contains("is held") } ?? ""
        #expect(message.hasPrefix("the server answered 503 Service Unavailable; the host 127.0.0.1:\(held.port) is held until ") && message.hasSuffix(" UTC (503s from 2 downloads)"),
                "\(message)")
        // One at a time, c first: d can only have gone before c because c's host is held.
        try await manager.enqueue(contentsOf: [request("c", held.url("/c"), to: folder.file("c")), request("d", other.url("/d"), to: folder.file("d"))])
        try await waitFor(manager, "d", .completed)   // the other host went on
        #expect(held.requests(for: "/c").isEmpty, "the held host waited")
        #expect(try await manager.download(withID: "c")?.status == .queued)
        try await advance(time, by: 4, manager)
        await manager.waitUntilIdle()
        for id: DownloadID in ["a", "b", "c"] { #expect(try await manager.download(withID: id)?.status == .completed, "\(id)") }
        #expect(held.requests(for: "/c").count == 1)
        await manager.shutdown()
    }

    /// A 429 holds the host at once.
    @Test func tooManyRequestsHoldsTheHost() async throws {
        let server = try TestServer()
        let other = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop(); other.stop() }
        server.setRoute("/first", Route(body: .bytes([1]), faults: [.status(429, times: 1, retryAfter: "3")]))
        server.setRoute("/second", Route(body: .bytes([2])))
        other.setRoute("/free", Route(body: .bytes([3])))
        let time = ManualClock()
        let manager = DownloadManager(configuration: clocked(time, concurrency: 1))
        let recorder = EventRecorder(manager)
        try await manager.enqueue(request("first", server.url("/first"), to: folder.file("1")))
        let waiting = try await recorder.waitFor("first", .waitingToRetry)
        #expect(waiting.lastError?.message.contains("is held until") == true && waiting.lastError?.message.contains("(it answered 429 Too Many Requests)") == true)
        // One at a time, second first: the free host's download can only go first because the host is held.
        try await manager.enqueue(contentsOf: [request("second", server.url("/second"), to: folder.file("2")), request("free", other.url("/free"), to: folder.file("3"))])
        try await waitFor(manager, "free", .completed)
        #expect(server.requests(for: "/second").isEmpty, "the host was held")
        try await advance(time, by: 3, manager)
        await manager.waitUntilIdle()
        #expect(try await manager.download(withID: "second")?.status == .completed)
        #expect(try await manager.download(withID: "first")?.status == .completed)
        await manager.shutdown()
    }

    /// The host that answered at the end of the redirects is held too: a CDN behind a tracker
    /// that says "too many" holds the downloads that went to it through another tracker.
    @Test func theHostThatAnsweredIsHeldToo() async throws {
        let cdn = try TestServer()
        let tracker = try TestServer()
        let other = try TestServer()
        let free = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); cdn.stop(); tracker.stop(); other.stop(); free.stop() }
        cdn.setRoute("/a.mp3", Route(body: .bytes([1]), faults: [.status(429, times: 1, retryAfter: "3")]))
        cdn.setRoute("/b.mp3", Route(body: .bytes([2]), faults: [.status(503, times: 1, retryAfter: "4")]))
        tracker.setRoute("/a.mp3", Route(body: .bytes([]), faults: [.redirect(to: cdn.url("/a.mp3").absoluteString)]))
        other.setRoute("/b.mp3", Route(body: .bytes([]), faults: [.redirect(to: cdn.url("/b.mp3").absoluteString)]))
        free.setRoute("/z.mp3", Route(body: .bytes([3])))
        let time = ManualClock()
        let manager = DownloadManager(configuration: clocked(time, concurrency: 1))
        let recorder = EventRecorder(manager)
        // b's first attempt tells that it ends at the CDN (a lone 503: no hold); paused meanwhile.
        try await manager.enqueue(request("b", other.url("/b.mp3"), to: folder.file("b")))
        _ = try await recorder.waitFor("b", .waitingToRetry)
        try await manager.pause("b")
        try await manager.enqueue(request("a", tracker.url("/a.mp3"), to: folder.file("a")))
        let heldFor = try await recorder.waitFor("a", .waitingToRetry)
        #expect(heldFor.lastError?.message.contains("the host 127.0.0.1:\(cdn.port) is held until") == true, "\(String(describing: heldFor.lastError))")
        // Back in line now, before z: through another tracker, but known to end at the held CDN,
        // it waits, and z (one at a time) can only go first because b does.
        try await manager.resume("b")
        try await manager.enqueue(request("z", free.url("/z.mp3"), to: folder.file("z")))
        try await waitFor(manager, "z", .completed)
        #expect(other.requests(for: "/b.mp3").count == 1, "b, known to end at the held CDN, waited for the hold")
        try await advance(time, by: 4, manager)
        await manager.waitUntilIdle()
        #expect(try await manager.download(withID: "a")?.status == .completed)
        #expect(try await manager.download(withID: "b")?.status == .completed)
        #expect(other.requests(for: "/b.mp3").count == 2)
        await manager.shutdown()
    }
}
