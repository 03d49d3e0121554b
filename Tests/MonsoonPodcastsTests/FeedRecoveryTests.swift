import Foundation
import Testing
@testable import MonsoonPodcasts

@Suite struct FeedRecoveryTests {
    @Test func whitespaceBeforeTheXMLDeclaration() throws {
        #expect(try parseXML("\n  \n" + rss("<item><guid>1</guid></item>")).episodes.count == 1)
        let garbage = try parseFixture("partytime/real-world/sentimental-garbage.xml")
        #expect(garbage.episodes.count == 138)
        #expect(garbage.newFeedURL != nil)
        #expect(try parseFixture("gofeed/rss_feed_leading_spaces.xml").title == "Feed Title")
    }

    @Test func aCommentBeforeTheXMLDeclaration() throws {
        #expect(try parseXML("<!-- generated -->\n" + rss("<item><guid>1</guid></item>")).episodes.count == 1)
    }

    /// synthetic/undefined_entities.xml: HTML entities, `&#0;` and a bare `&`, none of which XML allows.
    @Test func htmlEntitiesAndBareAmpersands() throws {
        let feed = try parseFixture("synthetic/undefined_entities.xml")
        let episode = try #require(feed.episodes.first)
        #expect(episode.title == "Café \u{A0}— ’quoted’ AT&T")
        #expect(episode.enclosureURL?.absoluteString == "https://media.example.org/x1.mp3?a=1&b=2")
    }

    @Test func unknownEntitiesStayAsText() throws {
        let feed = try parseXML(rss("<item><title>a &gtgt; b &foo; c &amp; d &lt;e&gt; &AMP; &hellip;</title><guid>1</guid></item>"))
        #expect(feed.episodes[0].title == "a &gtgt; b &foo; c & d <e> & …")
        // No Agenda's show notes carry `&lt;/p&gtgt;`: the feed is recovered whole.
        #expect(try parseFixture("partytime/real-world/no-agenda.xml").episodes.count == 29)
    }

    @Test func entitiesInsideCDATAAreLeftAlone() throws {
        let feed = try parseFixture("synthetic/entities_cdata.xml")
        #expect(feed.title == "Tom & Jerry’s <Show>")
        #expect(feed.episodes[0].title == "Q&A: bold & \"quotes\"")
        #expect(feed.episodes[0].summary == "<p>Escaped &amp; double-escaped</p>")
        #expect(feed.episodes[0].enclosureURL?.absoluteString == "https://media.example.org/e1.mp3?a=1&b=2")
        #expect(feed.episodes[1].title == "Numeric 🎙 © refs")
        let cdata = try parseXML(rss("<item><guid>1</guid><content:encoded><![CDATA[a &nbsp; & b]]></content:encoded></item>"))
        #expect(cdata.episodes[0].summary == "a &nbsp; & b")
    }

    /// CDATA sections reach the builder beside libxml2 (FeedRepair.cdataTarget): same texts, same line numbers.
    @Test func cdataSectionsKeepTheirTextAndLines() throws {
        let feed = try parseXML(rss("""
            <item><guid>1</guid><title>A <![CDATA[<b>&</b>]]> B</title><description><![CDATA[line 1
            line 2]]></description></item>
            """))
        #expect(feed.episodes[0].title == "A & B")
        #expect(feed.episodes[0].summary == "line 1\nline 2")
        let crlf = try parseXML(rss("<item><guid>1</guid><description><![CDATA[a\r\nb\rc]]></description></item>"))
        #expect(crlf.episodes[0].summary == "a\nb\nc")
        let broken = "<rss><channel><item><description><![CDATA[a\nb\nc]]></description></item>\n<title>x</titl></channel></rss>"
        #expect(feedError(Data(broken.utf8))?.line == 4)
        // A document's own marker can only reach the document's own CDATA sections.
        let forged = try parseXML(rss("<item><guid>1</guid><title><?monsoon-cdata 0?><?monsoon-cdata 99999999999999999999?>A</title><description><![CDATA[notes]]></description></item>"))
        #expect(forged.episodes[0].title == "notesA")
        #expect(FeedRepair.cdataTarget == "monsoon-cdata")
    }

    @Test func undeclaredPrefixes() throws {
        let feed = try parseXML("""
            <rss version="2.0"><channel><title>T</title><itunes:author>Someone</itunes:author>
            <item><guid>1</guid><itunes:duration>1:00</itunes:duration><itunes:episode>4</itunes:episode>
            <podcast:transcript url="https://example.org/t.vtt"/><media:content url="https://example.org/v.mp4" type="video/mp4"/></item>
            </channel></rss>
            """)
        #expect(feed.author == "Someone")
        #expect(feed.episodes[0].duration == 60)
        #expect(feed.episodes[0].episodeNumber == 4)
        #expect(feed.episodes[0].transcriptURL?.absoluteString == "https://example.org/t.vtt")
        #expect(feed.episodes[0].enclosureURL?.absoluteString == "https://example.org/v.mp4")
        let multi = try parseFixture("gofeed/itunes_item_summary_cdata_multi.xml")
        #expect(multi.episodes[0].summary?.hasPrefix("Line 1") == true)
    }

    @Test func forbiddenControlCharactersAreDropped() throws {
        let feed = try parseXML(rss("<item><title>Tab\u{0B}ulator\u{1A}</title><guid>1</guid></item>"))
        #expect(feed.episodes[0].title == "Tabulator")
    }

    @Test func doctypesAreRemoved() throws {
        #expect(try parseFixture("feedparser/illformed/always_strip_doctype.xml").title == "found")
        // RSS 0.91's DTD declared HTML's entities; feeds that cite it use them.
        let netscape = try parseXML("""
            <?xml version="1.0"?><!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd">
            <rss version="0.91"><channel><title>Caf&eacute;</title></channel></rss>
            """)
        #expect(netscape.title == "Café")
        let declared = try parseXML("""
            <?xml version="1.0"?><!DOCTYPE rss [ <!ENTITY show "The &amp; Show"> <!ENTITY copy "(c)"> ]>
            <rss version="2.0"><channel><title>&show; &copy;</title></channel></rss>
            """)
        #expect(declared.title == "The & Show (c)")
    }

    @Test func itemsWithoutAChannel() throws {
        #expect(try parseFixture("feedparser/encoding/bozo_encoding_mismatch_crash.xml").episodes.count == 1)
    }
}
