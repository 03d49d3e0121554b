import Foundation
import MonsoonTestServer
import Testing

/// `Examples/PodcastExample`, built as a user's package would build it (`make test` builds it
/// before the suites), run against the test server: the public API of the podcast layer does
/// what its example says.
@Suite struct PodcastExampleTests {
    /// Where `make test` builds it: `swift build --package-path Examples/PodcastExample --scratch-path .build/examples`.
    static let program = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/examples/debug/podcast-example").path

    static func feed(_ server: TestServer) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0"><channel><title>Example Show</title>
        <item><title>Older</title><guid>older</guid><enclosure url="\(server.url("/older.mp3"))" type="audio/mpeg" length="40000"/>
        <pubDate>Mon, 10 Jun 2024 10:00:00 GMT</pubDate></item>
        <item><title>Latest: part 2</title><guid>latest</guid><enclosure url="\(server.url("/latest.mp3"))" type="audio/mpeg" length="300000"/>
        <pubDate>Tue, 11 Jun 2024 10:00:00 GMT</pubDate></item>
        </channel></rss>
        """
    }

    @Test func itSubscribesAndDownloadsTheLatestEpisodeOnly() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let latest = Body.pattern(size: 300_000, seed: 24)
        server.setRoute("/latest.mp3", Route(body: latest, contentType: "audio/mpeg"))
        server.setRoute("/older.mp3", Route(body: .pattern(size: 40_000, seed: 23), contentType: "audio/mpeg"))
        server.setRoute("/feed.xml", Route(body: .bytes(Array(Self.feed(server).utf8)), contentType: "application/rss+xml"))
        let output = folder.file("episodes")

        let first = try await MonsoonProcess([server.url("/feed.xml").absoluteString, output], in: folder.path, program: Self.program).finish(seconds: 120)
        #expect(first.status == 0, "\(first.output)\(first.errors)")
        #expect(first.output.contains("subscribed to Example Show: 2 episodes"))
        // Named after the episode's title, made portable (a colon is refused on exFAT), with the extension its URL gives.
        let file = (output as NSString).appendingPathComponent("Latest_ part 2.mp3")
        #expect(first.output.contains("saved \(file)"), "\(first.output)")
        #expect(try SHA256.hex(fileAt: file) == SHA256.hex(Data(latest.data())))
        #expect(server.requests(for: "/older.mp3").isEmpty)

        // The subscription and the queue are in the folder's database: a second run finds them.
        let second = try await MonsoonProcess([server.url("/feed.xml").absoluteString, output], in: folder.path, program: Self.program).finish(seconds: 120)
        #expect(second.status == 0, "\(second.output)\(second.errors)")
        #expect(second.output.contains("already subscribed to Example Show"))
        #expect(try SHA256.hex(fileAt: file) == SHA256.hex(Data(latest.data())))
    }
}
