import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// An owner that records its files' digests (an episode, a cluster job) has the body hashed as it
/// is written (`DownloadOwner.hashesBody`), so that nobody reads the file back to hash it; the
/// digest is the file's exactly, and none is given where the attempt did not write it whole.
@Suite struct BodyDigestTests {
    /// A small file (written whole) and a large one (written into its part as it comes), both an
    /// episode's: each completes with the SHA-256 of the file on disk, kept in its row. The same
    /// large file downloaded directly is not hashed.
    @Test func anEpisodesFileIsHashedAsItIsWrittenWholeOrInItsPart() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        defer { folder.remove(); home.remove(); server.stop() }
        let small = Body.pattern(size: 40_000, seed: 3)
        let large = Body.pattern(size: 3_000_000, seed: 4)
        server.setRoute("/small.mp3", Route(body: small, contentType: "audio/mpeg"))
        server.setRoute("/large.mp3", Route(body: large, contentType: "audio/mpeg"))
        let database = home.file("queue.sqlite")
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database, watchesOtherProcesses: false)
        var requests = [
            DownloadRequest(id: "e1", url: server.url("/small.mp3"), destination: .directory(folder.path)),   // named: written whole
            request("e2", server.url("/large.mp3"), to: folder.file("large.mp3")),
            request("d3", server.url("/large.mp3"), to: folder.file("direct.mp3")),
        ]
        requests[0].owner = .episode
        requests[1].owner = .episode
        _ = try await manager.enqueue(contentsOf: requests)
        for (id, body, path) in [("e1", small, "small.mp3"), ("e2", large, "large.mp3")] {
            let done = try await waitFor(manager, DownloadID(id), .completed)
            #expect(done.checksum == body.sha256Hex(), "download \(id)'s digest is its body's")
            #expect(sha256(ofFile: folder.file(path)) == body.sha256Hex())
        }
        let direct = try await waitFor(manager, "d3", .completed)
        #expect(direct.checksum == nil, "a direct download is not hashed")
        #expect(sha256(ofFile: folder.file("direct.mp3")) == large.sha256Hex())
        await manager.shutdown()

        let store = try DownloadStore(path: database)
        let states = Dictionary(uniqueKeysWithValues: try store.states(of: ["e1", "e2", "d3"]).map { ($0.id, $0) })
        #expect(states["e1"]?.checksum == small.sha256Hex())
        #expect(states["e2"]?.checksum == large.sha256Hex())
        #expect(states["d3"]?.checksum == nil)
    }

    /// An episode whose first attempt is cut off: resumed with a range, its last attempt did not
    /// write the whole file, so no digest is given (the caller hashes the file); started over
    /// (the server takes no ranges), it is hashed whole by the attempt that wrote it.
    @Test func onlyAnAttemptThatWroteTheWholeFileGivesItsDigest() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let home = TemporaryFolder()
        defer { folder.remove(); home.remove(); server.stop() }
        let body = Body.pattern(size: 1_500_000, seed: 5)
        server.setRoute("/resumed.mp3", Route(body: body, etag: "\"r\"", faults: [.dropAfter(bytes: 700_000, times: 1)]))
        server.setRoute("/again.mp3", Route(body: body, supportsRanges: false, faults: [.dropAfter(bytes: 700_000, times: 1)]))
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: home.file("queue.sqlite"), watchesOtherProcesses: false)
        var requests = [request("e1", server.url("/resumed.mp3"), to: folder.file("resumed.mp3")),
                        request("e2", server.url("/again.mp3"), to: folder.file("again.mp3"))]
        requests[0].owner = .episode
        requests[1].owner = .episode
        _ = try await manager.enqueue(contentsOf: requests)
        let resumed = try await waitFor(manager, "e1", .completed)
        let again = try await waitFor(manager, "e2", .completed)
        #expect(sha256(ofFile: folder.file("resumed.mp3")) == body.sha256Hex())
        #expect(sha256(ofFile: folder.file("again.mp3")) == body.sha256Hex())
        #expect(server.requests.filter { $0.path == "/resumed.mp3" }.last?.headers["range"] == "bytes=700000-", "the second attempt resumed")
        #expect(resumed.checksum == nil)
        #expect(again.checksum == body.sha256Hex())
        await manager.shutdown()
    }
}
