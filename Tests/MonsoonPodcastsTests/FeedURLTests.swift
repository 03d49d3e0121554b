import Foundation
import Testing
@testable import MonsoonPodcasts

@Suite struct FeedURLTests {
    /// synthetic/enclosure_urls.xml: xml:base on <rss>, relative, protocol-relative, padded and escaped URLs.
    @Test func enclosureURLForms() throws {
        let feed = try parseFixture("synthetic/enclosure_urls.xml")
        #expect(feed.episodes.map { $0.enclosureURL?.absoluteString } == [
            "https://dts.podtrac.com/redirect.mp3/chtbl.com/track/ABC123/traffic.megaphone.fm/XYZ.mp3",
            "https://op3.dev/e/pdst.fm/e/chrt.fm/track/1/media.example.org/ep.mp3?updated=1700000000",
            "https://media.example.org/ep%20space.mp3?x=1&y=2",
            "http://media.example.org/ep.mp3#t=10",
            "https://www.example.org/relative/ep.mp3",
            "https://www.example.org/up/ep.mp3",
            "https://www.example.org/podcast/ep.mp3",
            "https://cdn.example.org/proto-relative.mp3",
            "https://media.example.org/padded.mp3",
        ])
        // The enclosure keeps its tracking prefix (publishers count downloads through it); only the identity drops it.
        #expect(EpisodeIdentity.normalizedEnclosureURL(try #require(feed.episodes[0].enclosureURL)) == "https://traffic.megaphone.fm/XYZ.mp3")
    }

    @Test func nestedXMLBaseAndTheDocumentURL() throws {
        let feed = try parseXML(rss("""
            <item xml:base="https://cdn.example.org/audio/"><title>A</title>
              <enclosure url="a.mp3" type="audio/mpeg"/><link>/web/a</link>
              <itunes:image href="../art/a.jpg"/></item>
            <item><title>B</title><enclosure url="b.mp3" type="audio/mpeg"/><link>b.html</link>
              <podcast:transcript url="b.vtt" type="text/vtt"/><podcast:chapters url="/ch/b.json" type="application/json+chapters"/></item>
            <item xml:base="sub/"><title>C</title><enclosure url="c.mp3" xml:base="https://other.example.net/x/" type="audio/mpeg"/></item>
            """), url: "https://feeds.example.org/show/feed.xml")
        let a = feed.episodes[0], b = feed.episodes[1], c = feed.episodes[2]
        #expect(a.enclosureURL?.absoluteString == "https://cdn.example.org/audio/a.mp3")
        #expect(a.link?.absoluteString == "https://cdn.example.org/web/a")
        #expect(a.imageURL?.absoluteString == "https://cdn.example.org/art/a.jpg")
        #expect(b.enclosureURL?.absoluteString == "https://feeds.example.org/show/b.mp3")
        #expect(b.link?.absoluteString == "https://feeds.example.org/show/b.html")
        #expect(b.transcriptURL?.absoluteString == "https://feeds.example.org/show/b.vtt")
        #expect(b.chaptersURL?.absoluteString == "https://feeds.example.org/ch/b.json")
        // xml:base on the element itself applies to its own attributes.
        #expect(c.enclosureURL?.absoluteString == "https://other.example.net/x/c.mp3")
    }

    @Test func atomXMLBase() throws {
        let feed = try parseFixture("synthetic/atom_podcast.xml")
        #expect(feed.kind == .atom)
        #expect(feed.nextPageURL?.absoluteString == "https://www.example.org/atom.xml?page=2")
        #expect(feed.episodes[0].enclosureURL?.absoluteString == "https://www.example.org/media/ep1.mp3")
        #expect(feed.episodes[0].link?.absoluteString == "https://www.example.org/ep1.html")
        // feed-rs/atom_relative.xml as if served from its site.
        let data = try Data(contentsOf: URL(fileURLWithPath: fixturePath("feed-rs/atom_relative.xml")))
        let relative = try FeedParser.parse(data, url: URL(string: "https://example.com/blog/feed.xml")!)
        #expect(relative.link?.absoluteString == "https://example.com/blog/")
        #expect(relative.artworkURL?.absoluteString == "https://example.com/blog/feed_logo.jpg")
        #expect(relative.episodes[0].link?.absoluteString == "https://example.com/blog/2003/12/13/atom03")
        #expect(relative.episodes[0].summary == "Some text.")
    }

    @Test func fileURLsForFiles() throws {
        // A relative enclosure in a file resolves against the file's own file:// URL.
        let feed = try parseFixture("feed-rs/rss_2.0_relurl_2.xml")
        #expect(feed.episodes[0].enclosureURL?.absoluteString == "file:///images/me/hackergotchi-simpler.png")
        let here = try FeedParser.parse(Data(rss("<item><enclosure url=\"ep.mp3\" type=\"audio/mpeg\"/></item>").utf8),
                                        url: URL(fileURLWithPath: "/srv/feeds/my show/feed.xml"))
        #expect(here.episodes[0].enclosureURL?.absoluteString == "file:///srv/feeds/my%20show/ep.mp3")
    }

    @Test func nonASCIIURLsArePercentEncoded() throws {
        let feed = try parseFixture("synthetic/latin1_declared.xml")
        #expect(feed.episodes[0].enclosureURL?.absoluteString == "https://media.example.org/caf%C3%A9.mp3")
    }
}
