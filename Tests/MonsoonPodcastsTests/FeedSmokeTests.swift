import Foundation
import Testing
@testable import MonsoonPodcasts

@Suite struct FeedSmokeTests {
    @Test func parsesMinimalFeed() throws {
        let xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><guid>a</guid></item></channel></rss>"#
        let feed = try FeedParser.parse(Data(xml.utf8), url: URL(string: "https://example.org/feed.xml")!)
        #expect(feed.title == "T")
        #expect(feed.episodes.count == 1)
    }
}
