import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// The podcast commands, in-process, against the test server.
@Suite struct PodcastCommandTests {
    static func feed(title: String, count: Int, newest: Int = 0) -> String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>\(title)</title>

            """
        for index in (0..<count).reversed() {
            text += "<item><title>Episode \(index + newest)</title><guid>\(title)-\(index + newest)</guid>"
            text += "<enclosure url=\"https://cdn.example.com/\(index + newest).mp3\" type=\"audio/mpeg\" length=\"100\"/>"
            text += "<pubDate>Wed, 31 Jan 2024 12:00:\(String(format: "%02d", index % 60)) GMT</pubDate><itunes:duration>1:02:03</itunes:duration></item>\n"
        }
        return text + "</channel></rss>\n"
    }

    @Test func addListRefreshUnsubscribe() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/show.xml", Route(body: .bytes(Array(Self.feed(title: "Morning Show", count: 3).utf8)), contentType: "application/rss+xml", etag: "\"1\""))
        let added = await runMonsoon(["add", server.url("/show.xml").absoluteString], in: folder.path)
        #expect(added.status == 0, "\(added.errors)")
        #expect(added.output.contains("subscribed: 1 Morning Show (3 episodes)"))
        let again = await runMonsoon(["add", server.url("/show.xml").absoluteString], in: folder.path)
        #expect(again.status == 0)
        #expect(again.output.contains("already subscribed"))

        let podcasts = await runMonsoon(["podcasts", "--json"], in: folder.path)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(podcasts.output.utf8)) as? [[String: Any]])
        #expect(list.count == 1)
        #expect(list[0]["id"] as? Int == 1)
        #expect(list[0]["title"] as? String == "Morning Show")

        let episodes = await runMonsoon(["episodes", "morning", "--json"], in: folder.path)
        let items = try #require(try JSONSerialization.jsonObject(with: Data(episodes.output.utf8)) as? [[String: Any]])
        #expect(items.count == 3)
        #expect(items.allSatisfy { $0["id"] is Int && $0["duration"] as? Int == 3723 })
        let text = await runMonsoon(["episodes", "1"], in: folder.path)
        #expect(text.output.contains("Episode 2"))
        #expect(text.output.contains("1:02:03"))

        server.setRoute("/show.xml", Route(body: .bytes(Array(Self.feed(title: "Morning Show", count: 5).utf8)), contentType: "application/rss+xml", etag: "\"2\""))
        let refreshed = await runMonsoon(["refresh"], in: folder.path)
        #expect(refreshed.status == 0)
        #expect(refreshed.output.contains("Morning Show: 2 new, 0 updated"))
        let unchanged = await runMonsoon(["refresh", "Morning"], in: folder.path)
        #expect(unchanged.output.contains("unchanged"))

        let exported = await runMonsoon(["export"], in: folder.path)
        #expect(exported.output.contains("<opml version=\"2.0\">"))
        #expect(exported.output.contains("xmlUrl=\"\(server.url("/show.xml").absoluteString)\""))

        let gone = await runMonsoon(["unsubscribe", "morning"], in: folder.path)
        #expect(gone.status == 0)
        #expect((await runMonsoon(["podcasts"], in: folder.path)).output.contains("no podcasts yet; subscribe with"))

        // Importing the export subscribes again.
        try exported.output.write(toFile: folder.file("subs.opml"), atomically: true, encoding: .utf8)
        let imported = await runMonsoon(["import", "subs.opml"], in: folder.path)
        #expect(imported.status == 0)
        #expect(imported.output.contains("subscribed:"))
    }

    /// `add` takes many feeds, as `archive` does: each is subscribed in turn, and one that cannot be read is said and
    /// fails the command without stopping the others.
    @Test func addTakesManyFeeds() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a.xml", Route(body: .bytes(Array(Self.feed(title: "Show A", count: 2).utf8)), contentType: "application/rss+xml"))
        server.setRoute("/b.xml", Route(body: .bytes(Array(Self.feed(title: "Show B", count: 3).utf8)), contentType: "application/rss+xml"))
        let both = await runMonsoon(["add", server.url("/a.xml").absoluteString, server.url("/b.xml").absoluteString], in: folder.path)
        #expect(both.status == 0, "\(both.errors)")
        #expect(both.output.contains("subscribed: 1 Show A (2 episodes)"))
        #expect(both.output.contains("subscribed: 2 Show B (3 episodes)"))
        let missing = server.url("/missing.xml").absoluteString
        server.setRoute("/c.xml", Route(body: .bytes(Array(Self.feed(title: "Show C", count: 1).utf8)), contentType: "application/rss+xml"))
        let partly = await runMonsoon(["add", missing, server.url("/c.xml").absoluteString], in: folder.path)
        #expect(partly.status == 1)
        #expect(partly.errors.contains("monsoon: cannot fetch \(missing): the server answered 404 Not Found"), "\(partly.errors)")
        #expect(partly.output.contains("subscribed: 3 Show C (1 episode)"))
        let typo = await runMonsoon(["add", server.url("/a.xml").absoluteString, "example"], in: folder.path)
        #expect(typo.status == 2, "no feed is read when one of them is no URL")
        #expect(!typo.output.contains("already subscribed"))
    }

    @Test func inspectPrintsTheDocumentedJSON() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let document = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>  Inspected
              Show </title>
            <item><title>First</title><guid> g1 </guid><enclosure url="media/one.mp3" type="audio/mpeg"/><pubDate>Wed, 31 Jan 2024 12:00:00 GMT</pubDate></item>
            <item><title>No enclosure</title><pubDate>not a date</pubDate></item>
            <item><title>Repeat</title><guid>g1</guid></item>
            </channel></rss>
            """
        try document.write(toFile: folder.file("feed.xml"), atomically: true, encoding: .utf8)
        let result = await runMonsoon(["inspect", "feed.xml", "--json"], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(object["title"] as? String == "Inspected Show")
        let episodes = try #require(object["episodes"] as? [[String: Any]])
        #expect(episodes.count == 2, "the repeated guid is left out")
        #expect(episodes[0]["guid"] as? String == "g1")
        #expect(episodes[0]["url"] as? String == "file://" + folder.file("media/one.mp3"))
        #expect(episodes[0]["published"] as? String == "2024-01-31T12:00:00Z")
        #expect(episodes[0]["duration"] is NSNull)
        #expect(episodes[1]["guid"] is NSNull)
        #expect(episodes[1]["url"] is NSNull)
        #expect(episodes[1]["published"] is NSNull)
        #expect(Set(episodes[0].keys) == ["guid", "title", "url", "published", "duration"])
    }

    /// PHP warnings before the feed and `</rss` cut: the feed is read, and each repair said on standard error only.
    @Test func inspectSaysWhatItRepaired() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let warning = "<b>Warning</b>: Undefined index<br />\n"
        try (warning + "<rss><channel><title>Show</title><item><guid>1</guid></item></channel></rss").write(toFile: folder.file("feed.xml"), atomically: true, encoding: .utf8)
        let result = await runMonsoon(["inspect", "feed.xml", "--json"], in: folder.path)
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect((object["episodes"] as? [[String: Any]])?.count == 1)
        #expect(result.errors == "monsoon: repaired: \(warning.utf8.count) bytes of text before the feed, not part of it, were skipped\n"
                + "monsoon: repaired: the feed ends early, inside its closing tags (an incomplete download?); every item before them was read\n")
    }

    @Test func unreadableFeedsGiveOneLineAndChangeNothing() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/page", Route(body: .bytes(Array("<html><head><link rel=\"alternate\" type=\"application/rss+xml\" href=\"/real.xml\"></head><body>hi</body></html>".utf8)), contentType: "text/html"))
        let html = await runMonsoon(["add", server.url("/page").absoluteString], in: folder.path)
        #expect(html.status == 1)
        #expect(html.errors.contains(server.url("/real.xml").absoluteString), "the error names the page's feed")
        #expect(html.errors.split(separator: "\n").count == 1)
        let missing = await runMonsoon(["add", server.url("/nothing").absoluteString], in: folder.path)
        #expect(missing.status == 1)
        #expect(missing.errors.contains("404"))
        let notURL = await runMonsoon(["add", "not a url"], in: folder.path)
        #expect(notURL.status == 2, "a usage error")
        #expect((await runMonsoon(["podcasts", "--json"], in: folder.path)).output.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        let unknown = await runMonsoon(["episodes", "nope"], in: folder.path)
        #expect(unknown.status == 1)
        #expect(unknown.errors.contains("no podcast has id or title 'nope'"))
    }

    /// A feed and an item without titles list under names made from the URL and the enclosure's file.
    @Test func nothingListsAsBlank() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let untitled = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><item><guid>1</guid><enclosure url="https://cdn.example.com/Pilot%20Episode.mp3" type="audio/mpeg"/></item></channel></rss>
            """
        server.setRoute("/shows/untitled.xml", Route(body: .bytes(Array(untitled.utf8)), contentType: "application/rss+xml"))
        let added = await runMonsoon(["add", server.url("/shows/untitled.xml").absoluteString], in: folder.path)
        #expect(added.status == 0, "\(added.errors)")
        #expect(added.output == "subscribed: 1 127.0.0.1:\(server.port)/shows/untitled.xml (1 episode)\n")
        let podcasts = await runMonsoon(["podcasts"], in: folder.path)
        #expect(podcasts.output == "ID    EPISODES PODCAST\n1     1        127.0.0.1:\(server.port)/shows/untitled.xml\n", "\(podcasts.output)")
        let episodes = await runMonsoon(["episodes", "1"], in: folder.path)
        #expect(episodes.output.contains("Pilot Episode"))
        #expect(!podcasts.output.contains("untitled)") && !episodes.output.contains("untitled)"))
        try untitled.write(toFile: folder.file("untitled.xml"), atomically: true, encoding: .utf8)
        let inspected = await runMonsoon(["inspect", "untitled.xml"], in: folder.path)
        // The count comes last: the lines are printed as the feed is read.
        #expect(inspected.output == "untitled.xml\n              Pilot Episode\n1 episode\n")
    }

    /// A later page that cannot be read: `add` and `refresh` keep what they read, warn on standard error
    /// with the page's URL (redacted) and the reason, record it as the last error and exit 1; once the
    /// page is back, a refresh reads it.
    @Test func aFailedPageIsAWarningAndExitOne() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        func page(_ number: Int, next: String?) -> Route {
            var text = Self.feed(title: "Paged", count: 2, newest: number * 10)
            if let next {
                text = text.replacingOccurrences(of: "<channel>", with: "<channel><atom:link xmlns:atom=\"http://www.w3.org/2005/Atom\" rel=\"next\" href=\"\(next)\"/>")
            }
            return Route(body: .bytes(Array(text.utf8)), contentType: "application/rss+xml", etag: "\"p\(number)\"")
        }
        server.setRoute("/paged.xml", page(1, next: "/paged2.xml"))
        server.setRoute("/paged2.xml", page(2, next: "/paged3.xml?token=s3cret"))
        let pageURL = server.url("/paged3.xml").absoluteString + "?token=***"
        let added = await runMonsoon(["add", server.url("/paged.xml").absoluteString], in: folder.path)
        #expect(added.status == 1)
        #expect(added.output == "subscribed: 1 Paged (4 episodes from 2 pages)\n")
        #expect(added.errors == "monsoon: warning: Paged: cannot fetch page 3 of the feed (\(pageURL)): the server answered 404 Not Found; check the address; "
                + "the episodes of the pages before it were kept, and the next refresh reads the whole feed again\n")

        let json = await runMonsoon(["podcasts", "--json"], in: folder.path)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(list.first?["lastError"] as? String == "cannot fetch page 3 of the feed (\(pageURL)): the server answered 404 Not Found; check the address")
        let text = await runMonsoon(["podcasts"], in: folder.path)
        #expect(text.output.contains("Paged  last refresh failed: cannot fetch page 3 of the feed (\(pageURL)): the server answered 404 Not Found; check the address\n"))
        #expect(!json.output.contains("s3cret") && !text.output.contains("s3cret") && !added.errors.contains("s3cret"))

        let still = await runMonsoon(["refresh"], in: folder.path)
        #expect(still.status == 1)
        #expect(still.output == "Paged: 0 new, 0 updated\n")
        #expect(still.errors.contains("warning: Paged: cannot fetch page 3"))

        server.setRoute("/paged3.xml", page(3, next: nil))
        let repaired = await runMonsoon(["refresh"], in: folder.path)
        #expect(repaired.status == 0, "\(repaired.errors)")
        #expect(repaired.output == "Paged: 2 new, 0 updated\n")
        #expect(repaired.errors.isEmpty)
    }

    /// `subscribe` is `add`; given a web page that names its feed, it subscribes to the feed and says where it found it.
    @Test func subscribeToTheFeedAPageNames() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/", Route(body: .bytes(Array("<html><head><link rel=\"alternate\" type=\"application/rss+xml\" href=\"/feed.xml\"></head></html>".utf8)),
                                   contentType: "text/html"))
        server.setRoute("/feed.xml", Route(body: .bytes(Array(Self.feed(title: "Found Show", count: 3).utf8)), contentType: "application/rss+xml"))
        let result = await runMonsoon(["subscribe", server.url("/").absoluteString], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == "subscribed: 1 Found Show (3 episodes); found the feed \(server.url("/feed.xml").absoluteString) on the page \(server.url("/").absoluteString)\n")
        let help = await runMonsoon(["help"], in: folder.path)
        #expect(help.output.contains("  add, subscribe          Subscribe to podcast feeds"))
        #expect((await runMonsoon(["help", "subscribe"], in: folder.path)).output.hasPrefix("Usage: monsoon add"))
    }

    /// `export` says which podcasts lost their credentials; `import` refuses a URL with the *** of the
    /// redaction (and sends nothing), subscribes to the other entries and exits 1.
    @Test func redactedCredentialsAreNeverSentAsCredentials() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/private.xml", Route(body: .bytes(Array(Self.feed(title: "Private", count: 1).utf8)), contentType: "application/rss+xml"))
        server.setRoute("/public.xml", Route(body: .bytes(Array(Self.feed(title: "Public", count: 1).utf8)), contentType: "application/rss+xml"))
        let port = server.port
        let added = await runMonsoon(["add", "http://alice:s3cret@127.0.0.1:\(port)/private.xml?token=abc"], in: folder.path)
        #expect(added.status == 0, "\(added.errors)")

        let exported = await runMonsoon(["export"], in: folder.path)
        #expect(exported.status == 0)
        #expect(exported.output.contains("xmlUrl=\"http://***:***@127.0.0.1:\(port)/private.xml?token=***\""))
        #expect(exported.errors == "monsoon: warning: the credentials in the feed URLs of 1 podcast were replaced by *** (1 Private); "
                + "importing this file cannot reach that feed; export with --include-credentials to keep them\n")
        let kept = await runMonsoon(["export", "--include-credentials"], in: folder.path)
        #expect(kept.errors.isEmpty && kept.output.contains("s3cret"))

        let opml = exported.output.replacingOccurrences(
            of: "  </body>", with: "    <outline type=\"rss\" text=\"Public\" xmlUrl=\"\(server.url("/public.xml").absoluteString)\"/>\n  </body>")
        try opml.write(toFile: folder.file("subs.opml"), atomically: true, encoding: .utf8)
        _ = await runMonsoon(["unsubscribe", "1"], in: folder.path)
        server.resetStatistics()
        let imported = await runMonsoon(["import", "subs.opml"], in: folder.path)
        #expect(imported.status == 1)
        #expect(imported.output == "subscribed: 2 Public (1 episode)\n")
        #expect(imported.errors == "monsoon: http://***:***@127.0.0.1:\(port)/private.xml?token=***: its credentials were left out when it was exported "
                + "(*** stands where they were), so it cannot be subscribed to; export with --include-credentials and import that file\n")
        #expect(server.requests(for: "/private.xml").isEmpty, "*** was never sent")

        let typed = await runMonsoon(["add", "http://***:***@127.0.0.1:\(port)/private.xml?token=***"], in: folder.path)
        #expect(typed.status == 1)
        #expect(typed.errors.contains("has *** where its credentials were"))
        #expect(server.requests(for: "/private.xml").isEmpty)
    }

    /// `add` and `inspect` of a host that refuses connections return at once with the reason in plain words.
    @Test func anUnreachableHostFailsAtOnceWithTheReason() async throws {
        let folder = Folder()
        let refusing = try TestServer.refusingPort()
        defer { folder.remove(); close(refusing.fd) }
        let url = "http://127.0.0.1:\(refusing.port)/feed.xml"
        let path = folder.path
        for command in ["add", "inspect"] {
            let result = await finishing(within: 20) { await runMonsoon([command, url], in: path) }
            let returned = try #require(result, "\(command) did not return")
            #expect(returned.status == 1)
            #expect(returned.errors == "monsoon: cannot fetch \(url): cannot connect to 127.0.0.1:\(refusing.port): connection refused; check the address and that the server is running\n", "\(command)")
        }
    }

    /// `inspect` of an image or audio (a file or a URL) says it is not a feed and what it is.
    @Test func inspectSaysWhatANonFeedIs() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x3C, 0x01]
        try Data(jpeg).write(to: URL(fileURLWithPath: folder.file("cover.jpg")))
        let file = await runMonsoon(["inspect", "cover.jpg"], in: folder.path)
        #expect(file.status == 1)
        #expect(file.errors == "monsoon: the file \(folder.file("cover.jpg")) is not a feed (RSS or Atom): it is an image (JPEG)\n")

        server.setRoute("/cover.png", Route(body: .bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x3C]), contentType: "image/png"))
        let png = await runMonsoon(["inspect", server.url("/cover.png").absoluteString], in: folder.path)
        #expect(png.errors == "monsoon: the document at \(server.url("/cover.png").absoluteString) is not a feed (RSS or Atom): it is an image (PNG)\n")
        // Bytes that say nothing (a raw MPEG stream in the middle of a frame), but the media type does.
        server.setRoute("/episode", Route(body: .bytes(Array("x<y".utf8)), contentType: "audio/mpeg"))
        let audio = await runMonsoon(["add", server.url("/episode").absoluteString], in: folder.path)
        #expect(audio.status == 1)
        #expect(audio.errors == "monsoon: the document at \(server.url("/episode").absoluteString) is not a feed (RSS or Atom): it is audio (MP3)\n")
    }

    /// `import` of an empty, broken or wrong file says what is wrong in plain words.
    @Test func importOfABrokenListSaysWhatIsWrong() async throws {
        let folder = Folder()
        defer { folder.remove() }
        try "".write(toFile: folder.file("empty.opml"), atomically: true, encoding: .utf8)
        try "garbage<".write(toFile: folder.file("broken.opml"), atomically: true, encoding: .utf8)
        try Self.feed(title: "A Feed", count: 1).write(toFile: folder.file("feed.xml"), atomically: true, encoding: .utf8)
        let expected = [
            "empty.opml": "empty.opml: the file is empty; an OPML subscription list is an XML file with <opml> at its root",
            "broken.opml": "broken.opml: not an OPML subscription list: it is not well-formed XML (line 1, column 1: no element where the document starts); an OPML subscription list is an XML file with <opml> at its root",
            "feed.xml": "feed.xml: it is a podcast feed, not a subscription list: subscribe to its address with 'monsoon add URL'",
        ]
        for (name, message) in expected {
            let result = await runMonsoon(["import", name], in: folder.path)
            #expect(result.status == 1)
            #expect(result.errors == "monsoon: \(message)\n")
            #expect(!result.errors.contains("NSXMLParserErrorDomain") && !result.errors.contains("could not be completed"))
        }
    }
}
