import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// The transfer thread keeps the curl handles of finished attempts for the next ones
/// (`EasyHandlePool`): what one attempt asked for must never reach the next one's request.
@Suite struct EasyHandleReuseTests {
    @Test func aHandleUsedAgainCarriesNothingOfTheAttemptBefore() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 1))
        defer { folder.remove(); server.stop() }
        let resumed = Body.pattern(size: 1 << 20, seed: 31)
        let plain = Body.pattern(size: 200_000, seed: 32)
        server.setRoute("/resumed.mp3", Route(body: resumed, contentType: "audio/mpeg", etag: "\"r1\"", faults: [.dropAfter(bytes: 300_000, times: 1)]))
        server.setRoute("/headers.mp3", Route(body: plain, contentType: "audio/mpeg"))
        server.setRoute("/plain.mp3", Route(body: plain, contentType: "audio/mpeg"))

        // One after another, each added once the one before is complete: each attempt takes
        // the handle the attempt before it gave back (the ranged retry's, then the one with headers).
        try await manager.enqueue(DownloadRequest(id: "resumed", url: server.url("/resumed.mp3"), destination: .file(folder.file("resumed.mp3"))))
        _ = try await waitFor(manager, "resumed", .completed)
        try await manager.enqueue(DownloadRequest(id: "headers", url: server.url("/headers.mp3"), destination: .file(folder.file("headers.mp3")),
                                                  headers: ["X-Monsoon-Test": "headers", "User-Agent": "Headers/1"]))
        _ = try await waitFor(manager, "headers", .completed)
        try await manager.enqueue(DownloadRequest(id: "plain", url: server.url("/plain.mp3"), destination: .file(folder.file("plain.mp3"))))
        _ = try await waitFor(manager, "plain", .completed)
        let made = try await manager.perform(now: { .success($0.easyHandlesMade) })
        await manager.shutdown()

        #expect(sha256(ofFile: folder.file("resumed.mp3")) == resumed.sha256Hex())
        #expect(sha256(ofFile: folder.file("headers.mp3")) == plain.sha256Hex())
        #expect(sha256(ofFile: folder.file("plain.mp3")) == plain.sha256Hex())
        #expect(made == 1, "four attempts, one after another, on one handle")

        let first = server.requests(for: "/resumed.mp3")
        #expect(first.count == 2)
        #expect(first.last?.header("Range") == "bytes=300000-" && first.last?.header("If-Range") == "\"r1\"")

        // After the ranged attempt: a whole request, with its own headers.
        let withHeaders = server.requests(for: "/headers.mp3")
        #expect(withHeaders.count == 1)
        #expect(withHeaders.first?.header("Range") == nil && withHeaders.first?.header("If-Range") == nil)
        #expect(withHeaders.first?.header("X-Monsoon-Test") == "headers")
        #expect(withHeaders.first?.header("User-Agent") == "Headers/1")

        // After the one with headers of its own: none of them, and the engine's User-Agent.
        let after = server.requests(for: "/plain.mp3")
        #expect(after.count == 1)
        #expect(after.first?.header("X-Monsoon-Test") == nil && after.first?.header("Range") == nil)
        #expect(after.first?.header("User-Agent") == EngineConfiguration().network.userAgent)
    }
}
