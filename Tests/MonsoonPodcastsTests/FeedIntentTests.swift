import Foundation
import Testing
@testable import MonsoonPodcasts

/// Feeds as publishers write them (issue 50): the enclosure they meant, the text they meant, the feed behind the junk.
/// Each document is the smallest that shows one case found in real feeds.
@Suite struct FeedIntentTests {
    /// Taverncast's `x-audio/mp3`; `audio/x-*`; a generic or missing type with a media file's extension.
    @Test func enclosuresOfUnregisteredMediaTypesAreKept() throws {
        let feed = try parseXML(rss("""
            <item><guid>1</guid><enclosure url="https://example.org/1.mp3" type="x-audio/mp3" length="2048"/></item>
            <item><guid>2</guid><enclosure url="https://example.org/2.m4a" type="audio/x-m4a"/></item>
            <item><guid>3</guid><enclosure url="https://example.org/3.pdf" type="application/octet-stream"/>
                <enclosure url="https://example.org/3.mp4" type="application/octet-stream"/></item>
            <item><guid>4</guid><enclosure url="https://example.org/4.jpg" type=""/><enclosure url="https://example.org/4.ogg" type=""/></item>
            <item><guid>5</guid><enclosure url="https://example.org/5.jpg" type="image/jpeg"/></item>
            """))
        #expect(feed.episodes.map { $0.enclosureURL?.lastPathComponent } == ["1.mp3", "2.m4a", "3.mp4", "4.ogg", nil])
        #expect(feed.episodes[0].mediaType == "x-audio/mp3")
        #expect(feed.episodes[0].declaredLength == 2048)
    }

    /// Channel 9's placeholder `media:content` (`fileSize="1"`) and Spiegel's copy without a length came first.
    @Test func theEnclosureWinsOverMediaContentInAnyOrder() throws {
        let feed = try parseXML(rss("""
            <item><guid>1</guid><media:content url="https://example.org/placeholder.mp4" fileSize="1" type="video/mp4"/>
                <enclosure url="https://example.org/real.mp4" type="video/mp4" length="126659374"/></item>
            <item><guid>2</guid><media:content url="https://example.org/same.mp3" type="audio/mpeg"/>
                <enclosure url="https://example.org/same.mp3" type="audio/mpeg" length="5000000"/></item>
            <item><guid>3</guid><media:content url="https://example.org/only.mp3" type="audio/mpeg" fileSize="4096"/></item>
            <item><guid>4</guid><media:content url="https://example.org/tiny.mp3" type="audio/mpeg" fileSize="1023"/></item>
            """))
        #expect(feed.episodes.map { $0.enclosureURL?.lastPathComponent } == ["real.mp4", "same.mp3", "only.mp3", nil])
        #expect(feed.episodes.map(\.declaredLength) == [126_659_374, 5_000_000, 4096, nil])
    }

    /// Podlove writes `<link rel="enclosure">` in RSS without Atom's namespace.
    @Test func anUnNamespacedEnclosureLinkInRSS() throws {
        let feed = try parseXML(rss("""
            <item><guid>1</guid><link>https://example.org/page</link>
                <link rel="enclosure" href="https://example.org/1.opus" type="audio/ogg" length="3000"/></item>
            """))
        #expect(feed.episodes[0].enclosureURL?.absoluteString == "https://example.org/1.opus")
        #expect(feed.episodes[0].declaredLength == 3000)
        #expect(feed.episodes[0].link?.absoluteString == "https://example.org/page")
    }

    /// A feed that declares ISO-8859-1 (or another single-byte code page) but holds UTF-8 showed `BrÃ¸ndby`.
    @Test func utf8MislabelledAsASingleByteEncodingIsReadAsUTF8() throws {
        for declared in ["ISO-8859-1", "windows-1252", "ISO-8859-15"] {
            let xml = "<?xml version=\"1.0\" encoding=\"\(declared)\"?><rss><channel><title>Brøndby veröffentlicht</title></channel></rss>"
            let feed = try FeedParser.parse(Data(xml.utf8), url: URL(string: "https://example.org/feed")!)
            #expect(feed.title == "Brøndby veröffentlicht", "declared \(declared)")
            #expect(feed.repairs == ["the feed declares the encoding \"\(declared)\" but is written in UTF-8; it was read as UTF-8"])
        }
        // Real Latin-1 is still Latin-1: 0xF8 alone is not UTF-8.
        let latin1 = Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><rss><channel><title>Br".utf8) + Data([0xF8])
            + Data("ndby</title></channel></rss>".utf8)
        let feed = try FeedParser.parse(latin1, url: URL(string: "https://example.org/feed")!)
        #expect(feed.title == "Brøndby")
        #expect(feed.repairs.isEmpty)
    }

    /// PHP warnings before a WordPress feed ("root element is <br>"); text saved with a page ("Document is empty").
    @Test func junkBeforeTheFeedIsSkippedAndSaid() throws {
        let warnings = "<br />\n<b>Warning</b>:  Cannot modify header information in <b>/var/www/wp.php</b> on line <b>8</b><br />\n"
        let feed = try parseXML(warnings + rss("<item><guid>1</guid></item>"))
        #expect(feed.episodes.count == 1)
        #expect(feed.repairs == ["\(warnings.utf8.count) bytes of text before the feed, not part of it, were skipped"])
        let saved = try parseXML("Saved from https://example.org/feed\n<rss><channel><title>Show</title></channel></rss>")
        #expect(saved.title == "Show")
        #expect(saved.repairs.count == 1)
        // An error further on keeps its line number.
        #expect(feedError(Data((warnings + "<rss><channel><title>x</titl></channel></rss>").utf8))?.line == 3)
        // A web page is still a web page.
        #expect(feedError(Data("<html><body><p>no feed</p></body></html>".utf8))?.code == .htmlPage)
    }

    @Test func junkBeforeTheFeedIsSkippedOnlyWithinItsLimit() throws {
        let junk = String(repeating: "x", count: FeedRepair.maxJunk)
        #expect(feedError(Data((junk + "<rss><channel><title>Show</title></channel></rss>").utf8)) != nil)
    }

    /// feedparser's entity tests end in `</rss` without its `>`.
    @Test func closingTagsCutOffAreRepairedWhenEveryItemIsComplete() throws {
        let whole = "<rss><channel><title>Show</title><item><guid>1</guid></item><item><guid>2</guid></item>\n</channel>\n</rss>"
        let rss1 = "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns=\"http://purl.org/rss/1.0/\">"
            + "<item rdf:about=\"1\"><title>1</title></item><item rdf:about=\"2\"><title>2</title></item>\n</rdf:RDF>"
        let atom = "<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><id>1</id></entry><entry><id>2</id></entry>\n</feed>"
        // In `</rss`, after `</channel>`, in `</chan`, in `</rdf:R`, in `</fe`.
        for cut in [whole.dropLast(1), whole.dropLast(6), whole.dropLast(9), rss1.dropLast(4), atom.dropLast(3)] {
            let feed = try parseXML(String(cut))
            #expect(feed.episodes.map(\.guid) == ["1", "2"], "\(cut.suffix(12))")
            #expect(feed.repairs == ["the feed ends early, inside its closing tags (an incomplete download?); every item before them was read"])
        }
        // Cut inside an item, or inside the start of the next one, or right after an item (later ones may be missing),
        // or stopped before the end: still refused.
        for cut in ["<rss><channel><item><guid>1</guid></item><item><guid>2</gu", "<rss><channel><item><guid>1</guid></item><ite",
                    String(whole.dropLast(17)), String(rss1.dropLast(11)), String(atom.dropLast(8)), "<rss><channel><item><guid>1</guid></item><",
                    "<rss><channel><item><guid>1</guid></item></channel></rss><rss><channel><item><guid>2</guid></item>"] {
            let error = try #require(feedError(Data(cut.utf8)))
            #expect(error.code == .malformed)
        }
    }

    /// RSS 1.0 has no guid: `rdf:about` is the item's identity.
    @Test func rdfAboutIsTheIdentityOfAnRSS1Item() throws {
        let feed = try parseXML("""
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
            <channel rdf:about="https://example.org/"><title>Show</title></channel>
            <item rdf:about="https://example.org/1"><title>One</title><link>https://example.org/1.html</link></item>
            <item rdf:about="https://example.org/2"><title>Two</title></item>
            </rdf:RDF>
            """)
        #expect(feed.episodes.map(\.guid) == ["https://example.org/1", "https://example.org/2"])
        #expect(feed.episodes.map(\.identity) == ["https://example.org/1", "https://example.org/2"])
    }

    @Test func aPermalinkGuidIsTheLinkOfAnItemWithout() throws {
        let feed = try parseXML(rss("""
            <item><guid>https://example.org/1</guid></item>
            <item><guid isPermaLink="true">https://example.org/2</guid></item>
            <item><guid isPermaLink="false">https://example.org/3</guid></item>
            <item><guid>tag:example.org,2024:4</guid></item>
            <item><guid>https://example.org/5</guid><link>https://example.org/page5</link></item>
            """))
        #expect(feed.episodes.map { $0.link?.absoluteString } == ["https://example.org/1", "https://example.org/2", nil, nil, "https://example.org/page5"])
    }

    /// `<rss>` in Atom's namespace said "its root element is <rss>, not <rss> or <feed>".
    @Test func aFeedRootInAForeignNamespaceNamesTheNamespace() throws {
        let error = try #require(feedError(Data("<rss xmlns=\"http://www.w3.org/2005/Atom\"><channel/></rss>".utf8)))
        #expect(error.code == .notAFeed)
        #expect(error.message == "the document is XML but not a feed: its root element <rss> is in the namespace \"http://www.w3.org/2005/Atom\", "
                + "which is neither RSS's nor Atom's; the publisher has to fix the feed")
    }

    /// Atom 1.0 says a text whose type is a media type other than text or XML is base64.
    @Test func anAtomTitleInBase64() throws {
        let feed = try parseXML("""
            <feed xmlns="http://www.w3.org/2005/Atom"><title type="application/octet-stream">U2hvdw==</title>
            <entry><id>1</id><title type="application/octet-stream">RXBpc29kZSAx</title></entry>
            <entry><id>2</id><title type="text/plain">RXBpc29kZSAx</title></entry></feed>
            """)
        #expect(feed.title == "Show")
        #expect(feed.episodes.map(\.title) == ["Episode 1", "RXBpc29kZSAx"])
    }

    /// Code pages Python names one way and iconv another (`cp_is`, `macroman`, `windows_1251` …), and the two Mac
    /// pages iconv lacks (Greek, Turkish).
    @Test func legacyCodePagesByTheirPythonNames() throws {
        for (name, byte, expected) in [("cp_is", 0x80, "Ç"), ("csibm861", 0x80, "Ç"), ("macroman", 0x80, "Ä"), ("maccentraleurope", 0x80, "Ä"),
                                       ("windows_1251", 0xC0, "А"), ("maciceland", 0x80, "Ä"), ("macgreek", 0x80, "Ä"),
                                       ("mac_greek", 0xE1, "α"), ("macturkish", 0xDA, "Ğ")] {
            let xml = Data("<?xml version=\"1.0\" encoding=\"\(name)\"?><rss><channel><title>".utf8) + Data([UInt8(byte)])
                + Data("</title></channel></rss>".utf8)
            #expect(try FeedParser.parse(xml, url: URL(string: "https://example.org/feed")!).title == expected, "\(name)")
        }
    }

    /// Found by feedparser's suite: a script's text in a title, HTML's `&#X41;`, Dublin Core's language and dates,
    /// Atom's `xml:lang`, `media:title`, a channel's `author`.
    @Test func scriptsInTitlesUppercaseHexReferencesAndDublinCore() throws {
        let feed = try parseXML("""
            <rss xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"><channel>
            <title>safe&lt;script>alert(1)&lt;/script> &lt;applet code="x.class">&lt;/applet>show&lt;style>b {}</title><dc:language>en</dc:language><author>Ann (ann@example.org)</author>
            <item><guid>1</guid><title>&#X41;&#x42;</title><dcterms:issued>2003-12-31T10:14:55Z</dcterms:issued></item>
            <item><guid>2</guid><dcterms:modified>2004-01-01T00:00:00Z</dcterms:modified><media:title xmlns:media="http://search.yahoo.com/mrss/">Two</media:title></item>
            </channel></rss>
            """)
        #expect(feed.title == "safe show")
        #expect(feed.language == "en")
        #expect(feed.episodes.map(\.title) == ["AB", "Two"])
        #expect(feed.author == "Ann (ann@example.org)")
        #expect(feed.episodes.map { utc($0.published) } == ["2003-12-31T10:14:55Z", "2004-01-01T00:00:00Z"])
        #expect(try parseXML("<feed xmlns=\"http://www.w3.org/2005/Atom\" xml:lang=\"en_US\"><title>Show</title></feed>").language == "en-US")
    }

    /// An XHTML title's text is the title: `&lt;blink&gt;` was markup written as text, not a tag to strip; a script's
    /// text is left out. Atom 0.3 names XHTML `application/xhtml+xml`.
    @Test func anXHTMLTitleIsItsTextAsWritten() throws {
        let feed = try parseXML("""
            <feed xmlns="http://www.w3.org/2005/Atom"><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">The &lt;b&gt; <b>show</b></div></title>
            <entry><id>1</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">History of the &lt;blink&gt;   tag</div></title></entry>
            <entry><id>2</id><title type="html">History of the &lt;blink&gt; tag</title></entry>
            <entry><id>3</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">safe<script>location.href='x';</script> <style>b {}</style>description</div></title></entry>
            </feed>
            """)
        #expect(feed.title == "The <b> show")
        #expect(feed.episodes.map(\.title) == ["History of the <blink> tag", "History of the tag", "safe description"])
        let atom03 = try parseXML("""
            <feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry><id>1</id>
            <title type="application/xhtml+xml" mode="xml"><div xmlns="http://www.w3.org/1999/xhtml">The &lt;blink&gt; tag</div></title></entry>
            <entry><id>2</id><title type="application/xhtml+xml" mode="escaped">&lt;b&gt;Escaped&lt;/b&gt; markup</title></entry>
            <entry><id>3</id><title type="text/plain">The &lt;blink&gt; tag, &amp;amp; more</title></entry></feed>
            """)
        #expect(atom03.episodes.map(\.title) == ["The <blink> tag", "Escaped markup", "The <blink> tag, &amp; more"])
        // A script in CDATA, as XHTML wraps one, is a script all the same.
        let cdata = try parseXML("""
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>1</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">\
            <script><![CDATA[var x = 1;]]></script>Episode</div></title></entry>
            <entry><id>2</id><title type="text">History of the &lt;blink&gt; tag</title></entry></feed>
            """)
        #expect(cdata.episodes.map(\.title) == ["Episode", "History of the <blink> tag"])
    }

    /// As in HTML, a quote opens an attribute's value only after `=`: `<a href=http://x/">` is a tag, not text.
    @Test func aStrayQuoteInATagIsPartOfTheTag() {
        #expect(FeedText.title("<a href=http://example.com/\">example</a>") == "example")
        #expect(FeedText.title("<a title=\"a > b\" href = 'x>y'>link</a> text") == "link text")
    }

    /// A no-break, en, em or thin space is the publisher's; runs of spaces and line breaks are collapsed, any space at
    /// either end goes, and a file name turns each into a plain space.
    @Test func typographicSpacesInTitlesAreKept() throws {
        let feed = try parseXML(rss("""
            <item><guid>1</guid><title>testing &#160; entity</title></item>
            <item><guid>2</guid><title>&nbsp;Part&ensp;1&emsp;of&thinsp;2 \n\t &#x2028; end&nbsp;</title></item>
            """))
        #expect(feed.episodes.map(\.title) == ["testing \u{A0} entity", "Part\u{2002}1\u{2003}of\u{2009}2 end"])
        let values = NamingValues(podcast: "Show", title: feed.episodes[1].title ?? "", published: nil, guid: nil, season: nil, episode: nil)
        #expect(NamingTemplate.standard.render(values).stem == "undated - Part 1 of 2 end")
    }

    /// iTunes' older image, `<itunes:link rel="image" href=…>`, for the show and an episode; another `rel` is no image.
    @Test func iTunesOlderImageLink() throws {
        let feed = try parseXML(rss("""
            <item><guid>1</guid><itunes:link rel="image" href="https://example.org/1.jpg"/></item>
            <item><guid>2</guid><itunes:link rel="video" href="https://example.org/2.mp4"/></item>
            """, channel: "<title>Show</title><itunes:link rel=\"image\" href=\"https://example.org/show.jpg\"/>"))
        #expect(feed.artworkURL?.absoluteString == "https://example.org/show.jpg")
        #expect(feed.episodes.map { $0.imageURL?.lastPathComponent } == ["1.jpg", nil])
    }

    /// Of two dates from one source the later written wins (Atom 0.3's `issued`, then 1.0's `published`); a better
    /// source still wins over a later worse one, and Atom 0.3's `created` (a draft's start) comes last of all.
    @Test func ofTwoDatesFromOneSourceTheLaterWritten() throws {
        let feed = try parseXML("""
            <feed xmlns="http://www.w3.org/2005/Atom">
            <entry><id>1</id><issued>2004-01-01T19:48:21Z</issued><published>2010-01-01T19:48:21Z</published></entry>
            <entry><id>2</id><updated>2010-12-01T10:14:55Z</updated><updated>2003-12-31T10:14:55Z</updated></entry>
            <entry><id>3</id><published>2001-01-01T00:00:00Z</published><updated>2002-01-01T00:00:00Z</updated><published>not a date</published></entry>
            <entry><id>4</id><issued>2004-01-02T00:00:00Z</issued><modified>2004-01-03T00:00:00Z</modified><created>2004-01-01T00:00:00Z</created></entry>
            <entry><id>5</id><created>2004-01-01T00:00:00Z</created></entry>
            </feed>
            """)
        #expect(feed.episodes.map { utc($0.published) } == ["2010-01-01T19:48:21Z", "2003-12-31T10:14:55Z", "2001-01-01T00:00:00Z",
                                                            "2004-01-02T00:00:00Z", "2004-01-01T00:00:00Z"])
    }

    /// Microsoft's CDF, RSS's forerunner: `<CHANNEL HREF=…>` as the root, `<ITEM HREF=… LASTMOD=…>`.
    @Test func aCDFChannel() throws {
        let feed = try parseXML("""
            <CHANNEL HREF="http://www.example.org/"><TITLE>Example feed</TITLE>
            <ITEM HREF="http://www.example.org/1" LASTMOD="2004-04-06T23:05:43-05:00"><TITLE>Example item</TITLE></ITEM>
            </CHANNEL>
            """)
        #expect(feed.title == "Example feed")
        #expect(feed.link?.absoluteString == "http://www.example.org/")
        let episode = try #require(feed.episodes.first)
        #expect(episode.title == "Example item")
        #expect(episode.link?.absoluteString == "http://www.example.org/1")
        #expect(utc(episode.published) == "2004-04-07T04:05:43Z")
    }
}
