import Foundation
import Testing
@testable import MonsoonPodcasts

@Suite struct FeedFieldTests {
    @Test func channelFields() throws {
        let feed = try parseXML(rss("", channel: """
            <title>  The   <b>Great</b> Show  </title><link>https://www.example.org/</link>
            <description><![CDATA[<p>About &amp; more</p>]]></description><language>en-us</language>
            <itunes:author>Jane Doe</itunes:author><managingEditor>ed@example.org</managingEditor>
            <image><url>https://www.example.org/rss.png</url><title>x</title></image>
            <itunes:image href="https://www.example.org/itunes.jpg"/>
            <itunes:new-feed-url> https://new.example.org/feed.xml </itunes:new-feed-url>
            <podcast:guid>917393e3-1b1e-5cef-ace4-edaa54e1f810</podcast:guid>
            <atom:link rel="self" href="https://feeds.example.org/show/feed.xml"/>
            <atom:link rel="next" href="?page=2"/>
            """))
        #expect(feed.kind == .rss)
        #expect(feed.title == "The Great Show")
        #expect(feed.link?.absoluteString == "https://www.example.org/")
        #expect(feed.description == "<p>About &amp; more</p>")
        #expect(feed.language == "en-us")
        #expect(feed.author == "Jane Doe")
        #expect(feed.artworkURL?.absoluteString == "https://www.example.org/itunes.jpg")
        #expect(feed.newFeedURL?.absoluteString == "https://new.example.org/feed.xml")
        #expect(feed.podcastGUID == "917393e3-1b1e-5cef-ace4-edaa54e1f810")
        #expect(feed.nextPageURL?.absoluteString == "https://feeds.example.org/show/feed.xml?page=2")
    }

    @Test func artworkAndAuthorFallbacks() throws {
        let rssImage = try parseXML(rss("", channel: "<title>T</title><image><url>/art.png</url></image><itunes:owner><itunes:name>Owner</itunes:name></itunes:owner>"))
        #expect(rssImage.artworkURL?.absoluteString == "https://feeds.example.org/art.png")
        #expect(rssImage.author == "Owner")
        let atom = try parseXML("""
            <feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><icon>/icon.png</icon><logo>/logo.png</logo>
            <author><name>Atom Author</name></author><subtitle>Sub</subtitle><link href="https://www.example.org/"/></feed>
            """)
        #expect(atom.kind == .atom)
        #expect(atom.artworkURL?.absoluteString == "https://feeds.example.org/logo.png")
        #expect(atom.author == "Atom Author")
        #expect(atom.description == "Sub")
        #expect(atom.link?.absoluteString == "https://www.example.org/")
    }

    @Test func itunesAndPodcastIndexItemFields() throws {
        let feed = try parseXML(rss("""
            <item><title>Ep</title><guid isPermaLink="false"> abc-1 </guid><pubDate>Mon, 01 Jan 2024 10:00:00 +0000</pubDate>
              <link>https://www.example.org/ep1</link>
              <description>Short &lt;b&gt;notes&lt;/b&gt;</description><content:encoded><![CDATA[<p>Long notes</p>]]></content:encoded>
              <enclosure url="https://media.example.org/1.mp3" length="12345" type="audio/mpeg"/>
              <itunes:duration>1:02:03</itunes:duration><itunes:season>2</itunes:season><itunes:episode> 7 </itunes:episode>
              <itunes:explicit>Yes</itunes:explicit><itunes:image href="https://media.example.org/1.jpg"/>
              <podcast:transcript url="https://media.example.org/1.vtt" type="text/vtt"/>
              <podcast:transcript url="https://media.example.org/1.srt" type="application/srt" language=" es " rel="captions"/>
              <podcast:chapters url="https://media.example.org/1.json" type="application/json+chapters"/></item>
            <item><itunes:title>Only the iTunes title</itunes:title><guid>abc-2</guid><itunes:explicit>clean</itunes:explicit>
              <itunes:summary>Summary</itunes:summary><itunes:season>x</itunes:season><media:thumbnail url="https://media.example.org/2.jpg"/></item>
            <item><guid>abc-3</guid><itunes:explicit>maybe</itunes:explicit><content:encoded>Encoded only</content:encoded></item>
            """))
        let one = feed.episodes[0], two = feed.episodes[1], three = feed.episodes[2]
        #expect(one.guid == "abc-1")
        #expect(one.identity == "abc-1")
        #expect(one.title == "Ep")
        #expect(utc(one.published) == "2024-01-01T10:00:00Z")
        #expect(one.link?.absoluteString == "https://www.example.org/ep1")
        #expect(one.summary == "Short <b>notes</b>")
        #expect(one.enclosureURL?.absoluteString == "https://media.example.org/1.mp3")
        #expect(one.mediaType == "audio/mpeg")
        #expect(one.declaredLength == 12345)
        #expect(one.duration == 3723)
        #expect(one.season == 2)
        #expect(one.episodeNumber == 7)
        #expect(one.explicit == true)
        #expect(one.imageURL?.absoluteString == "https://media.example.org/1.jpg")
        #expect(one.transcriptURL?.absoluteString == "https://media.example.org/1.vtt")
        #expect(one.transcripts == [.init(url: URL(string: "https://media.example.org/1.vtt")!, type: "text/vtt"),
                                    .init(url: URL(string: "https://media.example.org/1.srt")!, type: "application/srt", language: "es", rel: "captions")])
        #expect(two.transcripts.isEmpty)
        #expect(one.chaptersURL?.absoluteString == "https://media.example.org/1.json")
        #expect(two.title == "Only the iTunes title")
        #expect(two.explicit == false)
        #expect(two.summary == "Summary")
        #expect(two.season == nil)
        #expect(two.imageURL?.absoluteString == "https://media.example.org/2.jpg")
        #expect(three.explicit == nil)
        #expect(three.summary == "Encoded only")
        #expect(three.title == nil)
    }

    @Test func firstAudioOrVideoEnclosure() throws {
        let feed = try parseXML(rss("""
            <item><guid>1</guid><enclosure url="https://e.example/cover.jpg" type="image/jpeg"/>
              <enclosure url="https://e.example/notes.pdf" type="application/pdf"/>
              <enclosure url="https://e.example/1.m4a" type="audio/x-m4a" length="0"/><enclosure url="https://e.example/1.mp3" type="audio/mpeg"/></item>
            <item><guid>2</guid><enclosure url="https://e.example/2.bin"/><enclosure url="https://e.example/2.mp4" type="video/mp4"/></item>
            <item><guid>3</guid><enclosure url="https://e.example/3.bin" type="application/octet-stream"/></item>
            <item><guid>4</guid><media:group><media:content url="https://e.example/4.jpg" medium="image"/>
              <media:content url="https://e.example/4.ogg" medium="audio" fileSize="99000"/></media:group></item>
            <item><guid>5</guid><enclosure url="https://e.example/only.png" type="image/png"/></item>
            """))
        #expect(feed.episodes.map { $0.enclosureURL?.absoluteString } == [
            "https://e.example/1.m4a", "https://e.example/2.mp4", "https://e.example/3.bin", "https://e.example/4.ogg", nil,
        ])
        #expect(feed.episodes[0].declaredLength == nil)   // length="0" means unknown
        #expect(feed.episodes[3].declaredLength == 99000)
        #expect(feed.episodes[3].mediaType == nil)
    }

    @Test func atomEntries() throws {
        let feed = try parseFixture("synthetic/atom_podcast.xml")
        #expect(feed.title == "Atom <Cast>")
        let first = feed.episodes[0], second = feed.episodes[1]
        #expect(first.guid == "tag:example.org,2024:1")
        #expect(utc(first.published) == "2024-01-01T09:00:00Z")        // published wins over updated
        #expect(first.declaredLength == 1234)
        #expect(first.duration == 2520)
        #expect(first.summary == "<div><p>Show notes</p></div>")       // xhtml content kept as HTML
        #expect(utc(second.published) == "2024-01-03T10:00:00Z")       // updated when there is no published
        #expect(second.summary == "Summary only")
        #expect(second.enclosureURL?.absoluteString == "https://cdn.example.org/ep2.mp3")
    }

    @Test func rss1AndRealPodcastIndexFeeds() throws {
        let rdf = try parseFixture("feed-rs/rss_1.0_iso8859.xml")
        #expect(rdf.kind == .rss)
        #expect(rdf.episodes.count == 1)
        let example = try parseFixture("podcast-namespace/example.xml")
        #expect(example.podcastGUID != nil)
        #expect(example.episodes.contains { $0.transcriptURL != nil })
        #expect(example.episodes.contains { $0.chaptersURL != nil })
        let mn = try parseFixture("partytime/real-world/themnshow.xml")
        #expect(mn.episodes.allSatisfy { $0.enclosureURL?.host == "op3.dev" })
        #expect(mn.episodes.allSatisfy { !$0.identity.contains("op3.dev") || $0.guid != nil })
        let neo4j = try parseFixture("node-podcast-parser/neo4j.xml")
        #expect(neo4j.nextPageURL != nil)
    }
}
