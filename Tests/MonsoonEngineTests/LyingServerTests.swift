import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// Servers that contradict what they said before: whatever they answer, no file is ever placed
/// that is not the bytes they published, whole.
@Suite struct LyingServerTests {
    /// 200 with Content-Length 100,000 cut at 50,000, then `416 bytes */50000` to the resume (with
    /// the same ETag, or another): the half is never placed; the part starts over.
    @Test(arguments: ["\"v1\"", "\"v2\""])
    func aLying416NeverCertifiesHalfAFile(etag416: String) async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 100_000, seed: 44)
        server.setRoute("/half", Route(body: body, etag: "\"v1\"", faults: [
            .shortBody(missing: 50_000, times: 1),
            .unsatisfiable(total: 50_000, etag: etag416, times: 1),
        ]))
        let manager = DownloadManager(configuration: fastConfiguration())
        var asked = request("half", server.url("/half"), to: folder.file("half.bin"))
        asked.owner = .episode   // hashed as it is written: the digest is the file's, started over
        try await manager.enqueue(asked)
        #expect(try await waitFor(manager, "half", .completed).checksum == body.sha256Hex())
        #expect(sha256(ofFile: folder.file("half.bin")) == body.sha256Hex())
        let requests = server.requests(for: "/half")
        #expect(requests.map { $0.header("Range") } == [nil, "bytes=50000-", nil], "cut, the lying 416, then from the start")
        await manager.shutdown()
    }

    /// A server that ignores If-Range and sends version B's bytes for the rest of version A's part,
    /// in a 206 with the right Content-Range but no ETag or Last-Modified: never spliced.
    @Test func a206WithoutTheValidatorsIsNeverSplicedOnto() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let versionA = Body.pattern(size: 100_000, seed: 1)
        let versionB = Body.pattern(size: 100_000, seed: 2)
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        server.setRoute("/v", Route(body: versionA, etag: "\"A\"", lastModified: modified, faults: [.shortBody(missing: 60_000, times: 1)]))
        var configuration = fastConfiguration()
        configuration.retry = RetryPolicy(maxRetries: 5, baseDelay: 3600, maxDelay: 3600, jitter: 0)
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(request("v", server.url("/v"), to: folder.file("v.bin")))
        try await eventually("the cut attempt to end") { try await manager.download(withID: "v")?.status == .waitingToRetry }
        server.setRoute("/v", Route(body: versionB, etag: "\"B\"", lastModified: modified.addingTimeInterval(60),
                                    ignoresIfRange: true, rangesWithoutValidators: true))
        try await manager.retry(["v"])
        try await waitFor(manager, "v", .completed)
        #expect(sha256(ofFile: folder.file("v.bin")) == versionB.sha256Hex(), "all of version B, none of A")
        let requests = server.requests(for: "/v")
        #expect(requests.map { $0.header("Range") } == [nil, "bytes=40000-", nil])
        #expect(requests[1].header("If-Range") == "\"A\"")
        await manager.shutdown()
    }

    /// An open-ended Range answered in honest slices (`206 bytes 40000-59999/100000`): each slice
    /// goes on from where the last ended at once, not after a retry's delay (an hour here).
    @Test func shortHonestRangesGoOnWithoutAWait() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 100_000, seed: 3)
        server.setRoute("/s", Route(body: body, etag: "\"s\"", maxRangeLength: 20_000, faults: [.shortBody(missing: 60_000, times: 1)]))
        var configuration = fastConfiguration()
        configuration.retry = RetryPolicy(maxRetries: 5, baseDelay: 3600, maxDelay: 3600, jitter: 0)
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(request("s", server.url("/s"), to: folder.file("s.bin")))
        try await eventually("the cut attempt to end") { try await manager.download(withID: "s")?.status == .waitingToRetry }
        try await manager.retry(["s"])
        let done = try await waitFor(manager, "s", .completed)
        #expect(sha256(ofFile: folder.file("s.bin")) == body.sha256Hex())
        #expect(server.requests(for: "/s").map { $0.header("Range") } == [nil, "bytes=40000-", "bytes=60000-", "bytes=80000-"])
        #expect(done.attempts == 0, "the slices are no failures")
        await manager.shutdown()
    }

    /// Status lines curl cannot read are said to be that, not a refused scheme.
    @Test(arguments: ["HTTP/1.1 099 Odd", "HTTP/1.1 -200 Odd", "HTTP/1.1 200000000 Odd"])
    func anUnreadableStatusLineIsSaidToBeOne(line: String) async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/odd", Route(body: .bytes(Array("odd".utf8)), statusLine: line))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("odd", server.url("/odd"), to: folder.file("odd.bin")))
        let failed = try await waitFor(manager, "odd", .failed)
        #expect(failed.lastError?.code == .protocolViolation)
        #expect(failed.lastError?.message.hasPrefix("the server's answer is not valid HTTP (") == true, "\(String(describing: failed.lastError))")
        #expect(server.requests(for: "/odd").count == 1, "not worth asking again")
        #expect(!FileManager.default.fileExists(atPath: folder.file("odd.bin")))
        await manager.shutdown()
    }
}
