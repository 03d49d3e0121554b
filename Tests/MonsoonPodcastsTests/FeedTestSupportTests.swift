import Foundation
@testable import MonsoonPodcasts

// Helpers shared by the feed parser's tests (the file is named like the tests so the
// test folder's naming stays uniform).

/// The copied feed corpus: Tests/Fixtures/feeds, read in place.
let feedFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/feeds")

func fixturePath(_ relative: String) -> String {
    feedFixtures.appendingPathComponent(relative).path
}

/// Parses a fixture file.
func parseFixture(_ relative: String) throws -> ParsedFeed {
    try FeedParser.parse(fileAt: fixturePath(relative))
}

/// Parses XML given as a string, as if fetched from `url`.
func parseXML(_ xml: String, url: String = "https://feeds.example.org/show/feed.xml", limits: FeedLimits = FeedLimits()) throws -> ParsedFeed {
    try FeedParser.parse(Data(xml.utf8), url: URL(string: url)!, limits: limits)
}

/// The error parsing `data` throws, or nil when it parses.
func feedError(_ data: Data, url: String = "https://feeds.example.org/show/feed.xml", limits: FeedLimits = FeedLimits()) -> FeedError? {
    do {
        _ = try FeedParser.parse(data, url: URL(string: url)!, limits: limits)
        return nil
    } catch {
        return error
    }
}

/// A minimal RSS 2.0 document around `items` (with the iTunes and Podcast Index namespaces declared).
func rss(_ items: String, channel: String = "<title>Show</title>") -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0"
         xmlns:atom="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xmlns:content="http://purl.org/rss/1.0/modules/content/">
    <channel>\(channel)
    \(items)
    </channel>
    </rss>
    """
}

/// A date as `2024-01-02T10:00:00Z`, for comparisons to the second in UTC.
func utc(_ date: Date?) -> String? {
    date.map(FeedDate.iso8601String)
}
