import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// A feed of many batches (issue 20): `add` streams its episodes into the database a batch at a
/// time, and `refresh` reads it whole again, finding nothing new. How much memory that takes on
/// 300,000 items is measured by `make bench` (`Benchmarks/large_feed_bench.py`), not here.
@Suite struct LargeFeedTests {
    /// Five of `add`'s batches (`FeedParser.defaultBatchSize`).
    static let items = 5_000

    @Test func addAndRefreshOfAFeedOfManyBatches() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        var text = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Big</title>\n"
        for index in 0..<Self.items { text += "<item><guid>\(index)</guid><title>T</title></item>\n" }
        text += "</channel></rss>\n"
        // No validators: every refresh reads the whole feed again.
        server.setRoute("/big.xml", Route(body: .bytes(Array(text.utf8)), contentType: "application/rss+xml"))
        let url = server.url("/big.xml").absoluteString

        let added = await runMonsoon(["add", url], in: folder.path)
        #expect(added.status == 0, "\(added.errors)")
        #expect(added.output == "subscribed: 1 Big (\(Self.items) episodes)\n")

        let refreshed = await runMonsoon(["refresh"], in: folder.path)
        #expect(refreshed.status == 0, "\(refreshed.errors)")
        #expect(refreshed.output == "Big: 0 new, 0 updated\n")
        #expect(server.requests(for: "/big.xml").count == 2, "the refresh read the feed again")

        let podcasts = await runMonsoon(["podcasts", "--json"], in: folder.path)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(podcasts.output.utf8)) as? [[String: Any]])
        #expect(list.first?["episodes"] as? Int == Self.items)
    }
}
