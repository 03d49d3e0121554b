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
        defer { folder.remove(); server.stop() }
        let resumed = Body.pattern(size: 1 << 20, seed: 31)
        let plain = Body.pattern(size: 200_000, seed: 32)
        server.setRoute("/resumed.mp3", Route(body: resumed, contentType: "audio/mpeg", etag: "\"r1\"", faults: [.dropAfter(bytes: 300_000, times: 1)]))
        server.setRoute("/headers.mp3", Route(body: plain, contentType: "audio/mpeg"))
        server.setRoute("/plain.mp3", Route(body: plain, contentType: "audio/mpeg"))
        // One at a time, in this order: each attempt takes the handle the one before gave back.
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 1))
        try await manager.enqueue(contentsOf: [
            DownloadRequest(id: "resumed", url: server.url("/resumed.mp3"), destination: .file(folder.file("resumed.mp3")), priority: 3),
            DownloadRequest(id: "headers", url: server.url("/headers.mp3"), destination: .file(folder.file("headers.mp3")), priority: 2,
                            headers: ["X-Monsoon-Test": "headers", "User-Agent": "Headers/1"]),
            DownloadRequest(id: "plain", url: server.url("/plain.mp3"), destination: .file(folder.file("plain.mp3")), priority: 1),
        ])
        for id: DownloadID in ["resumed", "headers", "plain"] { _ = try await waitFor(manager, id, .completed) }
        #expect(sha256(ofFile: folder.file("resumed.mp3")) == resumed.sha256Hex())
        #expect(sha256(ofFile: folder.file("headers.mp3")) == plain.sha256Hex())
        #expect(sha256(ofFile: folder.file("plain.mp3")) == plain.sha256Hex())

        let first = server.requests(for: "/resumed.mp3")
        #expect(first.count == 2)
        #expect(first.last?.header("Range") == "bytes=300000-" && first.last?.header("If-Range") == "\"r1\"")

        // After a ranged attempt: a whole request, with its own headers.
        let withHeaders = try #require(server.requests(for: "/headers.mp3").first)
        #expect(withHeaders.header("Range") == nil && withHeaders.header("If-Range") == nil)
        #expect(withHeaders.header("X-Monsoon-Test") == "headers")
        #expect(withHeaders.header("User-Agent") == "Headers/1")

        // After one with headers of its own: none of them, and the engine's User-Agent.
        let after = try #require(server.requests(for: "/plain.mp3").first)
        #expect(after.header("X-Monsoon-Test") == nil && after.header("Range") == nil)
        #expect(after.header("User-Agent") == EngineConfiguration().userAgent)
        await manager.shutdown()
    }
}
