import Foundation
import Testing
@testable import MonsoonPodcasts

@Suite struct FeedSecurityTests {
    /// An external entity pointing at a local file must not bring that file's content in (XXE).
    @Test func externalEntitiesAreNeverResolved() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-xxe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = folder.appendingPathComponent("secret.txt")
        try Data("TOP-SECRET-CONTENT".utf8).write(to: secret)
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [ <!ENTITY xxe SYSTEM "\(secret.absoluteString)"> <!ENTITY xxe2 SYSTEM "\(secret.path)">
              <!ENTITY % remote SYSTEM "\(secret.absoluteString)"> %remote; ]>
            <rss version="2.0"><channel><title>A&xxe;B&xxe2;C</title>
            <item><guid>&xxe;</guid><title>x</title><enclosure url="https://e.example/&xxe;.mp3" type="audio/mpeg"/></item></channel></rss>
            """
        let feed = try FeedParser.parse(Data(xml.utf8), url: folder.appendingPathComponent("feed.xml"))
        #expect(feed.title == "ABC")
        let everything = "\(feed)"
        #expect(!everything.contains("TOP-SECRET"))
        // The classic: /etc/passwd, whose first line names root.
        let passwd = """
            <?xml version="1.0"?><!DOCTYPE rss [ <!ENTITY p SYSTEM "file:///etc/passwd"> ]>
            <rss version="2.0"><channel><title>[&p;]</title><item><guid>g</guid><title>&p;</title></item></channel></rss>
            """
        let parsed = try FeedParser.parse(Data(passwd.utf8), url: URL(string: "https://feeds.example.org/feed.xml")!)
        #expect(parsed.title == "[]")
        #expect(!"\(parsed)".contains("root:"))
        // Also when the document reaches libxml2 with a DTD it did not expect (after the root): no expansion.
        let late = "<rss version=\"2.0\"><channel><title>&xxe;</title></channel></rss>"
        #expect(!(((try? parseXML(late))?.title) ?? "").contains("TOP-SECRET"))
    }

    /// Billion laughs: ten levels of ten references. Refused after a bounded number of expansions,
    /// without the gigabytes (0.03 s and 25 MB for `monsoon inspect` in a release build).
    @Test func entityExpansionIsBounded() throws {
        var declarations = "<!ENTITY lol0 \"lol\">"
        for level in 1...9 {
            declarations += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">"
        }
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE rss [\(declarations)]><rss><channel><title>&lol9;</title></channel></rss>"
        let error = feedError(Data(xml.utf8))
        #expect(error?.code == .tooLarge)
        #expect(error?.message == "the feed expands more than \(FeedLimits().maxEntityExpansions) entity references, which only an entity bomb does; it was not read")
        // A quadratic blow-up (one big entity referenced many times) is bounded by the size cap.
        let big = String(repeating: "x", count: 100_000)
        let quadratic = "<?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY big \"\(big)\">]><rss><channel><title>"
            + String(repeating: "&big;", count: 2_000) + "</title></channel></rss>"
        #expect(feedError(Data(quadratic.utf8), limits: FeedLimits(maxBytes: 10 << 20))?.code == .tooLarge)
        // A handful of expansions is fine.
        let modest = "<!DOCTYPE rss [<!ENTITY a \"A\"><!ENTITY b \"&a;&a;\">]><rss><channel><title>&b;&b;</title></channel></rss>"
        #expect(try parseXML(modest).title == "AAAA")
        #expect(feedError(Data(modest.utf8), limits: FeedLimits(maxBytes: 1 << 20, maxEntityExpansions: 3))?.code == .tooLarge)
    }

    /// Elements nested deeper than ``FeedLimits/maxDepth`` (256) are refused where they go past it,
    /// before their memory grows with them (49 MB of `<a>` took 336 MB); 100 deep is read.
    @Test func deeplyNestedElements() throws {
        for depth in [300, 200_000] {
            let xml = "<rss version=\"2.0\"><channel><title>Deep</title><item><guid>g</guid><description>\n"
                + String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth) + "</description></item></channel></rss>"
            let error = feedError(Data(xml.utf8))
            #expect(error?.code == .tooComplex && error?.line == 2, "\(depth)")
            #expect(error?.message == "the feed nests elements more than 256 deep at line 2, which no real feed does; it was not read: "
                    + "the publisher has to fix the feed")
        }
        let xml = "<rss version=\"2.0\"><channel><title>Deep</title><item><guid>g</guid><x>" + String(repeating: "<a>", count: 100)
            + String(repeating: "</a>", count: 100) + "</x></item></channel></rss>"
        #expect(try parseXML(xml).episodes.count == 1)
    }

    /// An element with more than ``FeedLimits/maxAttributes`` (256) attributes is refused before
    /// libxml2 reads it, which would compare each attribute with all those before it (400,000 took
    /// 48 s); also when the DTD's entities bring the attributes in, and whatever the quotes hold.
    @Test func elementsWithTooManyAttributesAreRefusedUnparsed() throws {
        func feed(attributes: Int, quote: String = "\"", value: String = "") -> String {
            let extra = (0..<attributes).map { " a\($0)=\(quote)\(value)\(quote)" }.joined()
            return "<rss version=\"2.0\"><channel><title>Many</title>\n<item><guid>g</guid>"
                + "<enclosure url=\"https://cdn.example.com/1.mp3\" type=\"audio/mpeg\"\(extra)/></item></channel></rss>"
        }
        let message = "the feed's <enclosure> at line 2 has more than 256 attributes, which no real feed has; it was not read: "
            + "the publisher has to fix the feed"
        for text in [feed(attributes: 255), feed(attributes: 400_000)] {
            let error = feedError(Data(text.utf8))
            #expect(error?.code == .tooComplex && error?.message == message && error?.line == 2)
        }
        #expect(try parseXML(feed(attributes: 254)).episodes.first?.enclosureURL?.absoluteString == "https://cdn.example.com/1.mp3")
        // Values with `>` and `<` in them, and long ones, do not hide attributes, nor make them up.
        #expect(feedError(Data(feed(attributes: 300, quote: "'", value: "a > b").utf8))?.code == .tooComplex)
        #expect(try parseXML(feed(attributes: 200, value: String(repeating: "v", count: 2_000))).episodes.count == 1)
        let notes = "<description>" + String(repeating: "a=\"1\" ", count: 1_000) + "</description>"
        #expect(try parseXML(rss("<item><guid>g</guid>\(notes)</item>")).episodes.count == 1)

        // Attributes an entity brings in, where the document's own text has none.
        let many = (0..<300).map { " b\($0)=''" }.joined()
        let expanded = "<!DOCTYPE rss [<!ENTITY many \"\(many)\">]>\n<rss version=\"2.0\"><channel><title>E</title>\n"
            + "<item><guid>g</guid><enclosure url=\"https://cdn.example.com/1.mp3\" &many;/></item></channel></rss>"
        #expect(feedError(Data(expanded.utf8))?.code == .tooComplex)
    }

    /// A text of many megabytes is cut where no one reads on, at a character's start, and ends with
    /// `…`: titles and authors at ``FeedLimits/maxTitleBytes`` (4 KiB), any other text at
    /// ``FeedLimits/maxTextBytes`` (1 MiB). A 10 MB title made `monsoon archive` take 330 MB and 9 s.
    @Test func aHugeTextIsCutWhereNoOneReadsOn() throws {
        let limits = FeedLimits()
        let title = String(repeating: "T", count: 10_000_000)
        // "€" is three bytes: 4 KiB falls inside the 1,366th.
        let itemTitle = String(repeating: "€", count: 3_000_000)
        let notes = String(repeating: "<p>notes</p>", count: 200_000)
        let xml = "<rss version=\"2.0\"><channel><title>\(title)</title><itunes:author>\(title)</itunes:author>\n"
            + "<item><guid>g</guid><title>\(itemTitle)</title><description><![CDATA[\(notes)]]></description></item></channel></rss>"
        let feed = try parseXML(xml, limits: FeedLimits(maxBytes: 64 << 20))
        #expect(feed.title == String(repeating: "T", count: limits.maxTitleBytes) + "…")
        #expect(feed.author == feed.title)
        let episode = try #require(feed.episodes.first)
        #expect(episode.title == String(repeating: "€", count: limits.maxTitleBytes / 3) + "…")
        #expect(episode.summary == String(String(repeating: "<p>notes</p>", count: 200_000).utf8.prefix(limits.maxTextBytes))! + "…")
        // Under the limits, nothing is cut.
        #expect(try parseXML("<rss><channel><title>\(String(repeating: "T", count: limits.maxTitleBytes))</title></channel></rss>").title?.count
                == limits.maxTitleBytes)
    }

    /// Tags in a title are stripped in one pass: after a tag that nothing closes, the rest is text (a title of
    /// `<b x` written 10,000 times took 7 s, every later `<b` looked for its end again); a comment that nothing
    /// closes hides the rest, as in HTML.
    @Test func titlesWithUnclosedTagsAreReadInOnePass() throws {
        #expect(FeedText.title("<b class=\"x <i>Show</i>") == "<b class=\"x <i>Show</i>")
        #expect(FeedText.title("<i>A</i> <!-- B <i>C</i>") == "A")
        #expect(FeedText.title("safe<!--") == "safe")
        #expect(FeedText.title("<!-->Episode <!--->1") == "Episode 1", "empty comments, as in HTML")
        #expect(FeedText.title(String(repeating: "<!-- x", count: 20_000)) == nil)
        #expect(FeedText.title("<i>A</i> <b>B</b>") == "A B")
        let unclosed = String(repeating: "<b \"x", count: 20_000)
        #expect(FeedText.title(unclosed) == unclosed)
    }

    @Test func selfReferentialEntities() {
        let xml = "<!DOCTYPE rss [<!ENTITY a \"&b;\"><!ENTITY b \"&a;\">]><rss><channel><title>&a;</title></channel></rss>"
        #expect(feedError(Data(xml.utf8))?.code == .malformed)
    }

    @Test func sizeCap() throws {
        let xml = rss(String(repeating: "<item><guid>x</guid></item>\n", count: 2_000))
        let limits = FeedLimits(maxBytes: 10_000)
        let error = feedError(Data(xml.utf8), limits: limits)
        #expect(error?.code == .tooLarge)
        #expect(error?.message.contains("10000") == true)
        #expect(FeedLimits().maxBytes == 50 << 20)
        // A file over the cap is refused before it is read.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-big-\(UUID().uuidString).xml").path
        try Data(xml.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: FeedError.self) { try FeedParser.parse(fileAt: path, limits: limits) }
        #expect(try FeedParser.parse(fileAt: path).episodes.count == 1)  // all share the guid "x"
    }

    /// More than 10,000,000 bytes, which `XMLParser(data:)` refuses on Linux.
    @Test func largeDocuments() throws {
        let notes = String(repeating: "<p>Show notes with <a href='https://example.org/'>links</a> &amp; more.</p>", count: 30)
        var items = ""
        for index in 0..<4_500 {
            items += "<item><guid>g\(index)</guid><title>Episode \(index)</title><description><![CDATA[\(notes)]]></description>"
                + "<enclosure url=\"https://media.example.org/\(index).mp3\" type=\"audio/mpeg\"/></item>\n"
        }
        let data = Data(rss(items).utf8)
        #expect(data.count > 10_000_000)
        let feed = try FeedParser.parse(data, url: URL(string: "https://example.org/feed.xml")!)
        #expect(feed.episodes.count == 4_500)
        #expect(feed.episodes.last?.enclosureURL?.absoluteString == "https://media.example.org/4499.mp3")
        #expect(feed.episodes.last?.summary?.hasSuffix("more.</p>") == true)
        // The same from a file.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-large-\(UUID().uuidString).xml").path
        try data.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try FeedParser.parse(fileAt: path) == feed)
    }
}
