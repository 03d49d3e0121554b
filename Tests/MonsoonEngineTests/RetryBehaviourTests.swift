import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// Each status class retried or not, per the policy, against the real server.
@Suite struct RetryBehaviourTests {
    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func transientStatusesAreRetried(_ status: Int) async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 50_000, seed: UInt64(status))
        server.setRoute("/r", Route(body: body, faults: [.status(status, times: 2)]))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("r", server.url("/r"), to: folder.file("r.bin")))
        let done = try await waitFor(manager, "r", .completed)
        #expect(sha256(ofFile: folder.file("r.bin")) == body.sha256Hex())
        #expect(server.requests(for: "/r").count == 3)
        #expect(done.lastError == nil)
        await manager.shutdown()
    }

    @Test(arguments: [400, 403, 404, 410])
    func permanentStatusesFailAtOnceWithoutAFile(_ status: Int) async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/p", Route.html(status: status, "<html><body>nope</body></html>"))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("p", server.url("/p"), to: folder.file("p.mp3")))
        let failed = try await waitFor(manager, "p", .failed)
        #expect(failed.lastError?.httpStatus == status)
        #expect(failed.lastError?.message.contains("\(status)") == true)
        #expect(server.requests(for: "/p").count == 1)
        #expect(folder.contents().isEmpty, "an error body never reaches the destination or a part file")
        await manager.shutdown()
    }

    @Test func aServerErrorPageIsNeverWrittenEvenWhenRetriesRunOut() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/x", Route.html(status: 500, "<html>boom</html>"))
        let manager = DownloadManager(configuration: fastConfiguration(retries: 2))
        try await manager.enqueue(request("x", server.url("/x"), to: folder.file("x.mp3")))
        let failed = try await waitFor(manager, "x", .failed)
        #expect(server.requests(for: "/x").count == 3, "retries 2 means 3 attempts")
        #expect(failed.lastError?.message.contains("gave up after 2 retries") == true)
        #expect(folder.contents().isEmpty)
        await manager.shutdown()
    }

    @Test func retryAfterIsHonoured() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 10_000, seed: 1)
        server.setRoute("/ra", Route(body: body, faults: [.status(503, times: 1, retryAfter: "2")]))
        // The engine's time is the test's: the two seconds pass when the test says so.
        let time = ManualClock()
        var configuration = fastConfiguration()
        configuration.clock = time.clock
        let manager = DownloadManager(configuration: configuration)
        let recorder = EventRecorder(manager)
        try await manager.enqueue(request("ra", server.url("/ra"), to: folder.file("ra.bin")))
        let waiting = try await recorder.waitFor("ra", .waitingToRetry)
        #expect(waiting.retryAt == time.now.addingTimeInterval(2))
        #expect(waiting.lastError?.httpStatus == 503)
        time.advance(by: 1.9)
        #expect(try await manager.download(withID: "ra")?.status == .waitingToRetry, "not due yet: no second attempt")
        #expect(server.requests(for: "/ra").count == 1)
        time.advance(by: 0.1)
        _ = try await manager.counts()   // a turn of the loop, which finds the retry due
        try await waitFor(manager, "ra", .completed)
        #expect(server.requests(for: "/ra").count == 2)
        await manager.shutdown()
    }

    @Test func retryAfterAsAnHTTPDate() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 10_000, seed: 2)
        let time = ManualClock()
        var configuration = fastConfiguration()
        configuration.clock = time.clock
        server.setRoute("/rd", Route(body: body, faults: [.status(429, times: 1, retryAfter: HTTPDate.format(time.now.addingTimeInterval(3)))]))
        let manager = DownloadManager(configuration: configuration)
        let recorder = EventRecorder(manager)
        try await manager.enqueue(request("rd", server.url("/rd"), to: folder.file("rd.bin")))
        let waiting = try await recorder.waitFor("rd", .waitingToRetry)
        #expect(waiting.retryAt == time.now.addingTimeInterval(3), "the retry waits for the date")
        time.advance(by: 2)
        #expect(try await manager.download(withID: "rd")?.status == .waitingToRetry)
        #expect(server.requests(for: "/rd").count == 1)
        time.advance(by: 1)
        _ = try await manager.counts()   // a turn of the loop, which finds the retry due
        try await waitFor(manager, "rd", .completed)
        #expect(server.requests(for: "/rd").count == 2)
        await manager.shutdown()
    }

    @Test func aRetryAfterLongerThanTheCapFailsWithTheReason() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/long", Route(body: .bytes([1]), faults: [.status(503, times: 5, retryAfter: "3600")]))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("long", server.url("/long"), to: folder.file("long.bin")))
        let failed = try await waitFor(manager, "long", .failed)
        #expect(failed.lastError?.code == .retryAfterTooLong)
        #expect(failed.lastError?.message.contains("retry later") == true)
        // The user can retry later; the server has recovered by then.
        server.setRoute("/long", Route(body: .bytes([1])))
        try await manager.retry(["long"])
        try await waitFor(manager, "long", .completed)
        await manager.shutdown()
    }

    @Test func aRefusedConnectionIsRetriedThenFails() async throws {
        let refusing = try TestServer.refusingPort()
        let url = URL(string: "http://127.0.0.1:\(refusing.port)/gone")!
        let folder = TemporaryFolder()
        defer { folder.remove(); close(refusing.fd) }
        let manager = DownloadManager(configuration: fastConfiguration(retries: 2))
        try await manager.enqueue(request("n", url, to: folder.file("n.bin")))
        let failed = try await waitFor(manager, "n", .failed)
        #expect(failed.lastError?.code == .network)
        #expect(failed.attempts == 3)
        #expect(folder.contents().isEmpty)
        await manager.shutdown()
    }

    @Test func aFlakyLinkStillCompletesALargeFile() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 2 << 20, seed: 3)
        // More drops than retries: each made progress, so none counts.
        let drops = (0..<6).map { _ in Fault.dropAfter(bytes: 300_000, times: 1) }
        server.setRoute("/flaky", Route(body: body, etag: "\"f\"", faults: drops))
        let manager = DownloadManager(configuration: fastConfiguration(retries: 2))
        try await manager.enqueue(request("flaky", server.url("/flaky"), to: folder.file("flaky.bin")))
        try await waitFor(manager, "flaky", .completed)
        #expect(sha256(ofFile: folder.file("flaky.bin")) == body.sha256Hex())
        #expect(server.requests(for: "/flaky").count == 7)
        #expect(server.bodyBytesSent == 2 << 20)
        await manager.shutdown()
    }
}
