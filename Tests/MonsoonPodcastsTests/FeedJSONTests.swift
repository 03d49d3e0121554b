import Foundation
import Testing
@testable import MonsoonPodcasts

@Suite struct FeedJSONTests {
    @Test func inspectShape() throws {
        let feed = try parseXML(rss("""
            <item><guid>a"1</guid><title>Tab\there \\ "quoted" é</title><pubDate>Wed, 31 Jan 2024 12:00:00 +0000</pubDate>
              <enclosure url="https://e.example/1.mp3?a=1&amp;b=2" type="audio/mpeg"/><itunes:duration>61</itunes:duration></item>
            <item><title>No guid, no enclosure</title><pubDate>garbage</pubDate></item>
            """, channel: "<title>Show \"Q\"</title>"))
        let data = feed.inspectJSON()
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["title"] as? String == "Show \"Q\"")
        let episodes = try #require(object["episodes"] as? [[String: Any]])
        #expect(episodes.count == 2)
        #expect(episodes[0]["guid"] as? String == "a\"1")
        #expect(episodes[0]["title"] as? String == "Tab here \\ \"quoted\" é")
        #expect(episodes[0]["url"] as? String == "https://e.example/1.mp3?a=1&b=2")
        #expect(episodes[0]["published"] as? String == "2024-01-31T12:00:00Z")
        #expect(episodes[0]["duration"] as? Int == 61)
        #expect(episodes[1]["guid"] is NSNull)
        #expect(episodes[1]["url"] is NSNull)
        #expect(episodes[1]["published"] is NSNull)
        #expect(episodes[1]["duration"] is NSNull)
    }

    @Test func controlCharactersAndEmptyFeeds() throws {
        var out: [UInt8] = []
        ParsedFeed.appendJSONString("a\u{01}b\nc", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "\"a\\u0001b\\nc\"")
        let empty = ParsedFeed(kind: .rss).inspectJSON()
        let object = try #require(try JSONSerialization.jsonObject(with: empty) as? [String: Any])
        #expect(object["title"] is NSNull)
        #expect((object["episodes"] as? [Any])?.isEmpty == true)
    }
}
