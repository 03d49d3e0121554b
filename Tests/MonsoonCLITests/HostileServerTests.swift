import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// Servers that answer with what no real one sends: each is a clear error, never curl's internals.
@Suite struct HostileServerTests {
    @Test func aResponseHeaderOfAMegabyteIsRefusedInPlainWords() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let huge = String(repeating: "x", count: 1 << 20)
        server.setRoute("/a.mp3", Route(body: .bytes([1, 2, 3]), contentType: "audio/mpeg", extraHeaders: [("X-Padding", huge)]))
        server.setRoute("/feed.xml", Route(body: .bytes(Array("<rss/>".utf8)), extraHeaders: [("X-Padding", huge)]))
        let get = await runMonsoon(["get", "--retries", "0", server.url("/a.mp3").absoluteString], in: folder.path)
        #expect(get.status == 1)
        #expect(get.errors.contains("the server's response header is larger than 100 KB, more than Monsoon accepts; refused"), "\(get.errors)")
        #expect(!get.errors.lowercased().contains("out of memory"), "\(get.errors)")
        let add = await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path)
        #expect(add.status == 1)
        #expect(add.errors.contains("the server's response header is larger than 100 KB, more than Monsoon accepts; refused"), "\(add.errors)")
    }
}
