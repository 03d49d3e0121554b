import Foundation
import Testing
@testable import MonsoonPodcasts

/// What other parsers read, Monsoon reads too.
@Suite struct FeedCompatibilityTests {
    @Test func aCommentWithDoubleHyphensIsRepairedNotFatal() throws {
        let feed = try parseXML("""
            <?xml version="1.0"?>
            <!-- generated -- by a tool --->
            <rss version="2.0"><channel><title>Show</title><!-- a -- b -->
            <item><title>One<!-- x -- y --></title><guid>1</guid></item>
            <!---->
            </channel></rss>
            """)
        #expect(feed.title == "Show")
        #expect(feed.episodes.map(\.title) == ["One"])
    }

    @Test func dcTitleNamesWhatHasNoTitle() throws {
        let feed = try parseXML(rss("""
            <item><dc:title>From Dublin Core</dc:title><guid>1</guid></item>
            <item><dc:title>Not this</dc:title><title>The title</title><guid>2</guid></item>
            <item><itunes:title>iTunes first</itunes:title><dc:title>Then Dublin Core</dc:title><guid>3</guid></item>
            """, channel: "<dc:title>Show by DC</dc:title>"))
        #expect(feed.title == "Show by DC")
        #expect(feed.episodes.map(\.title) == ["From Dublin Core", "The title", "iTunes first"])
        let both = try parseXML(rss("", channel: "<dc:title>Second</dc:title><title>First</title>"))
        #expect(both.title == "First")
    }

    @Test func rssElementsAreReadInAnyCase() throws {
        let feed = try parseXML("""
            <?xml version="1.0"?><RSS version="2.0"><Channel><TiTlE>Loud Show</TiTlE><LINK>https://example.org/</LINK>
            <ITEM><Title>One</Title><GUID>g1</GUID><PubDate>Mon, 01 Jan 2024 10:00:00 GMT</PubDate>
            <Enclosure url="https://cdn.example.org/1.mp3" type="audio/mpeg" length="12345678"/><Description>About</Description></ITEM>
            </Channel></RSS>
            """)
        #expect(feed.title == "Loud Show")
        #expect(feed.link?.absoluteString == "https://example.org/")
        let episode = try #require(feed.episodes.first)
        #expect(episode.title == "One" && episode.guid == "g1" && episode.summary == "About")
        #expect(episode.enclosureURL?.absoluteString == "https://cdn.example.org/1.mp3" && episode.declaredLength == 12_345_678)
        #expect(episode.published == Date(timeIntervalSince1970: 1_704_103_200))
    }

    @Test func atomTextConstructsOfEveryType() throws {
        let feed = try parseXML("""
            <?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title type="">No type at all</title>
            <subtitle type="base64">QWJvdXQgdGhlIHNob3c=</subtitle>
            <entry><id>1</id><title type="base64">SGVsbG8sIHdvcmxk</title><summary type="html">&lt;p&gt;Notes&lt;/p&gt;</summary></entry>
            <entry><id>4</id><title type="html">A &amp;amp; &lt;i&gt;B&lt;/i&gt; &amp;rdquo;</title></entry>
            <entry><id>2</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Bold <b>move</b> &amp; more</div></title></entry>
            <entry><id>3</id><title type="text">Plain &lt;b&gt;</title></entry>
            </feed>
            """)
        #expect(feed.title == "No type at all")
        #expect(feed.description == "About the show")
        // Declared plain text, `&lt;b&gt;` is text, not a tag.
        #expect(feed.episodes.map(\.title) == ["Hello, world", "A & B ”", "Bold move & more", "Plain <b>"])
        #expect(feed.episodes.first?.summary == "<p>Notes</p>", "show notes stay HTML, as always")
        let atom03 = try parseXML("""
            <?xml version="1.0"?><feed version="0.3" xmlns="http://purl.org/atom/ns#"><title mode="base64">T2xkIEF0b20=</title>
            <entry><id>1</id><title mode="escaped">Caf&amp;eacute;</title></entry></feed>
            """)
        #expect(atom03.title == "Old Atom")
        #expect(atom03.episodes.first?.title == "Café")
    }
}
