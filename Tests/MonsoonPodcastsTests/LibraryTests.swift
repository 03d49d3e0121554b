import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// An RSS document for tests.
func rss(title: String = "Show", items: [(guid: String?, title: String, url: String?)], extraChannel: String = "", extraItem: String = "") -> String {
    var text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:atom="http://www.w3.org/2005/Atom">
        <channel><title>\(title)</title><link>https://example.com/</link>\(extraChannel)

        """
    for (index, item) in items.enumerated() {
        text += "<item><title>\(item.title)</title>"
        if let guid = item.guid { text += "<guid isPermaLink=\"false\">\(guid)</guid>" }
        if let url = item.url { text += "<enclosure url=\"\(url)\" type=\"audio/mpeg\" length=\"1000\"/>" }
        text += "<pubDate>Mon, \(10 + index) Jun 2024 10:00:00 GMT</pubDate><itunes:duration>10:0\(index % 10)</itunes:duration>\(extraItem)</item>\n"
    }
    return text + "</channel></rss>\n"
}

/// Page `number` of a paged feed (RFC 5005): `items` items, and a link to the `next` page.
func pagedRSS(_ number: Int, items: Int, next: String?) -> String {
    rss(items: (0..<items).map { ("p\(number)-\($0)", "Page \(number) item \($0)", "https://cdn.example.com/\(number)-\($0).mp3") },
        extraChannel: next.map { "<atom:link rel=\"next\" href=\"\($0)\"/>" } ?? "")
}

func feedRoute(_ text: String, etag: String? = nil) -> Route {
    Route(body: .bytes(Array(text.utf8)), contentType: "application/rss+xml", etag: etag)
}

/// A library on an in-memory database with its own engine.
struct LibraryFixture {
    let library: PodcastLibrary
    let manager: DownloadManager
    let database: Database

    init() throws {
        var configuration = EngineConfiguration()
        configuration.retry = RetryPolicy(maxRetries: 1, baseDelay: 0.05, maxDelay: 1, jitter: 0)
        manager = DownloadManager(configuration: configuration)
        database = try Database(path: ":memory:")
        library = try PodcastLibrary(database: database, manager: manager)
    }
}

@Suite struct LibraryTests {
    @Test func refreshAddsNewEpisodesByGuidAndNeverTouchesTheUsersState() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let library = fixture.library
        server.setRoute("/feed", feedRoute(rss(items: [("a", "One", "https://cdn.example.com/1.mp3"), ("b", "Two", "https://cdn.example.com/2.mp3")])))
        guard case .subscribed(let podcast, let first) = try await library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(first.added == 2)
        #expect(podcast.title == "Show")
        let episodes = try library.episodes(of: podcast.id)
        #expect(episodes.count == 2)
        let two = try #require(episodes.first { $0.guid == "b" })
        try fixture.database.run("UPDATE episodes SET position = 42.5, played = 1, download_state = 'downloaded', file_name = 'two.mp3', queue_position = 3 WHERE id = ?", two.id)

        server.setRoute("/feed", feedRoute(rss(items: [("a", "One", "https://cdn.example.com/1.mp3"), ("b", "Two (remastered)", "https://cdn.example.com/2b.mp3"),
                                                       ("c", "Three", "https://cdn.example.com/3.mp3")])))
        let summary = try await library.refresh(podcast.id)
        #expect(summary.added == 1)
        #expect(summary.updated == 1)
        let after = try library.episodes(of: podcast.id)
        #expect(after.count == 3)
        let updated = try #require(after.first { $0.guid == "b" })
        #expect(updated.id == two.id)
        #expect(updated.title == "Two (remastered)")
        #expect(updated.enclosureURL?.absoluteString == "https://cdn.example.com/2b.mp3")
        #expect(updated.position == 42.5 && updated.played && updated.downloadState == .downloaded && updated.fileName == "two.mp3" && updated.queuePosition == 3)

        // Subscribing again says so and changes nothing.
        guard case .alreadySubscribed = try await library.subscribe(to: server.url("/feed")) else {
            Issue.record("a second subscription must be refused"); return
        }
        #expect(try library.podcasts().count == 1)
        await fixture.manager.shutdown()
    }

    @Test func itemsWithoutGuidsAndReusedGuidsAreEachKeptOnce() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let items: [(guid: String?, title: String, url: String?)] = [
            (nil, "No guid", "https://dts.podtrac.com/redirect.mp3/cdn.example.com/x.mp3"),
            ("dup", "First", "https://cdn.example.com/first.mp3"),
            ("dup", "Second", "https://cdn.example.com/second.mp3"),
            ("dup", "Second again", "https://op3.dev/e/cdn.example.com/second.mp3"),
        ]
        server.setRoute("/feed", feedRoute(rss(items: items)))
        guard case .subscribed(let podcast, let summary) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(summary.added == 3)
        #expect(summary.duplicates == 1)
        let again = try await fixture.library.refresh(podcast.id)
        #expect(again.added == 0 && again.updated == 0)
        #expect(try fixture.library.episodes(of: podcast.id).compactMap(\.title).sorted() == ["First", "No guid", "Second"])
        await fixture.manager.shutdown()
    }

    /// A new recording that re-uses an old guid, published on top, is added; the rows of the old
    /// recordings stay theirs (same id, same user state, nothing updated), on this refresh and the next.
    @Test func aReusedGuidOnTopDoesNotTakeAnOlderRecordingsRow() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        // Items as a publisher writes them: each keeps its date wherever it stands.
        func item(_ number: Int, _ title: String) -> String {
            "<item><title>\(title)</title><guid>dup</guid><enclosure url=\"https://cdn.example.com/\(number).mp3\" type=\"audio/mpeg\"/>"
                + "<pubDate>Mon, 0\(number) Jul 2024 10:00:00 GMT</pubDate></item>"
        }
        let old = item(2, "Two") + item(1, "One")
        server.setRoute("/feed", feedRoute(rss(title: "Show", items: [], extraChannel: old)))
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        let one = try #require(try fixture.library.episodes(of: podcast.id).first { $0.title == "One" })
        try fixture.database.run("UPDATE episodes SET position = 12, played = 1 WHERE id = ?", one.id)

        server.setRoute("/feed", feedRoute(rss(title: "Show", items: [], extraChannel: item(3, "Three") + old)))
        let summary = try await fixture.library.refresh(podcast.id)
        #expect(summary.added == 1)
        #expect(summary.updated == 0)
        let episodes = try fixture.library.episodes(of: podcast.id)
        #expect(episodes.compactMap(\.title).sorted() == ["One", "Three", "Two"])
        let kept = try #require(episodes.first { $0.id == one.id })
        #expect(kept.title == "One" && kept.position == 12 && kept.played)
        let next = try await fixture.library.refresh(podcast.id)
        #expect(next.added == 0 && next.updated == 0)
        await fixture.manager.shutdown()
    }

    @Test func conditionalRefreshAndGzip() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let document = rss(items: [("a", "One", "https://cdn.example.com/1.mp3")])
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-c"]
        let input = Pipe(), output = Pipe()
        gzip.standardInput = input
        gzip.standardOutput = output
        try gzip.run()
        input.fileHandleForWriting.write(Data(document.utf8))
        try input.fileHandleForWriting.close()
        let compressed = output.fileHandleForReading.readDataToEndOfFile()
        gzip.waitUntilExit()
        server.setRoute("/feed", Route(body: .bytes(Array(compressed)), contentType: "application/rss+xml", etag: "\"v1\"", extraHeaders: [("Content-Encoding", "gzip")]))
        guard case .subscribed(let podcast, let summary) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(summary.added == 1)
        #expect(server.requests.first?.header("Accept-Encoding")?.contains("gzip") == true)
        let again = try await fixture.library.refresh(podcast.id)
        #expect(again.unchanged)
        #expect(server.requests.last?.header("If-None-Match") == "\"v1\"")
        await fixture.manager.shutdown()
    }

    @Test func pagedFeedsAreFollowedWithLoopDetection() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        func page(_ number: Int, next: String?) -> String { pagedRSS(number, items: 3, next: next) }
        server.setRoute("/feed", feedRoute(page(1, next: "/feed?page=2")))
        server.setRoute("/feed2", feedRoute(page(2, next: server.url("/feed3").absoluteString)))
        server.setRoute("/feed3", feedRoute(page(3, next: "/feed")))   // back to the first: a loop
        // The test server matches paths without the query: route page 2 by a distinct path.
        server.setRoute("/feed", feedRoute(page(1, next: "/feed2")))
        guard case .subscribed(let podcast, let summary) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(summary.pages == 3)
        #expect(summary.added == 9)
        #expect(try fixture.library.episodes(of: podcast.id).count == 9)
        #expect(summary.duplicates == 0)
        #expect(server.requests(for: "/feed").count == 1, "the loop back to page 1 was not followed")
        await fixture.manager.shutdown()
    }

    /// Pages follow the rules of one document: a guid re-used with another enclosure is kept, an exact
    /// repeat of an earlier page's item is left out and counted.
    @Test func pagesKeepReusedGuidsAndCountRepeats() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        server.setRoute("/feed", feedRoute(rss(items: [("g1", "A", "https://cdn.example.com/a.mp3"), ("g2", "B", "https://cdn.example.com/b.mp3")],
                                               extraChannel: "<atom:link rel=\"next\" href=\"/feed2\"/>")))
        server.setRoute("/feed2", feedRoute(rss(items: [("g1", "C", "https://cdn.example.com/c.mp3"), ("g2", "B", "https://chrt.fm/track/X/cdn.example.com/b.mp3"),
                                                        ("g3", "D", "https://cdn.example.com/d.mp3")])))
        guard case .subscribed(let podcast, let summary) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(summary.pages == 2)
        #expect(summary.added == 4)
        #expect(summary.duplicates == 1)
        #expect(try fixture.library.episodes(of: podcast.id).compactMap(\.title).sorted() == ["A", "B", "C", "D"])
        let again = try await fixture.library.refresh(podcast.id)
        #expect(again.added == 0 && again.updated == 0)
        await fixture.manager.shutdown()
    }

    /// A later page that fails keeps what was read, says which page and why (redacted), is the podcast's
    /// last error, and the next refresh reads the whole feed again although the first page is unchanged.
    @Test func aFailedPageIsReportedAndTriedAgain() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        func page(_ number: Int, next: String?) -> Route { feedRoute(pagedRSS(number, items: 2, next: next), etag: "\"p\(number)\"") }
        server.setRoute("/feed", page(1, next: "/feed2"))
        server.setRoute("/feed2", page(2, next: "/feed3?token=s3cret"))
        guard case .subscribed(let podcast, let summary) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(summary.added == 4 && summary.pages == 2)
        let error = try #require(summary.pageError)
        #expect(error.code == .httpStatus && error.httpStatus == 404)
        #expect(error.message == "cannot fetch page 3 of the feed (\(server.url("/feed3").absoluteString)?token=***): the server answered 404 Not Found; check the address")
        let stored = try #require(try fixture.library.podcast(withID: podcast.id))
        #expect(stored.lastError == error.message)
        #expect(stored.etag == nil && stored.lastModified == nil)

        // Unreachable, this time.
        let refusing = try TestServer.refusingPort()
        defer { close(refusing.fd) }
        server.setRoute("/feed2", page(2, next: "http://127.0.0.1:\(refusing.port)/feed3"))
        let unreachable = try await fixture.library.refresh(podcast.id)
        #expect(unreachable.pageError?.code == .network)
        #expect(unreachable.pageError?.message.contains("page 3 of the feed (http://127.0.0.1:\(refusing.port)/feed3): cannot connect to 127.0.0.1:\(refusing.port): connection refused") == true)

        server.setRoute("/feed2", page(2, next: "/feed3"))
        server.setRoute("/feed3", page(3, next: nil))
        server.resetStatistics()
        let repaired = try await fixture.library.refresh(podcast.id)
        #expect(server.requests(for: "/feed").first?.header("If-None-Match") == nil, "no conditional request while a page is missing")
        #expect(repaired.added == 2 && repaired.pages == 3 && repaired.pageError == nil)
        let after = try #require(try fixture.library.podcast(withID: podcast.id))
        #expect(after.lastError == nil && after.etag == "\"p1\"")
        #expect(try await fixture.library.refresh(podcast.id).unchanged, "complete again: conditional again")
        await fixture.manager.shutdown()
    }

    /// A web page that names its feed subscribes to that feed (RSS or Atom), once: a page that names
    /// another page fails with the page error, and nothing is stored.
    @Test func aWebPageThatNamesItsFeedSubscribesToIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        func page(_ type: String, _ href: String) -> Route {
            Route(body: .bytes(Array("<!doctype html><html><head><title>Home</title><link rel=\"alternate\" type=\"\(type)\" href=\"\(href)\"></head><body></body></html>".utf8)),
                  contentType: "text/html")
        }
        server.setRoute("/", page("application/rss+xml", "/feed.xml"))
        server.setRoute("/feed.xml", feedRoute(rss(title: "Named", items: [("a", "One", "https://cdn.example.com/1.mp3")])))
        guard case .subscribed(let podcast, let summary) = try await fixture.library.subscribe(to: server.url("/")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(podcast.feedURL == server.url("/feed.xml"))
        #expect(podcast.title == "Named" && summary.added == 1)
        #expect(summary.foundOnPage == server.url("/"))
        guard case .alreadySubscribed(let again) = try await fixture.library.subscribe(to: server.url("/")) else {
            Issue.record("the page's feed is already subscribed"); return
        }
        #expect(again.id == podcast.id)

        server.setRoute("/atom", page("application/atom+xml", "/atom.xml"))
        server.setRoute("/atom.xml", feedRoute("""
            <?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Atom Named</title>
            <entry><id>e1</id><title>E</title><link rel="enclosure" href="https://cdn.example.com/e.mp3" type="audio/mpeg"/></entry></feed>
            """))
        guard case .subscribed(let atom, _) = try await fixture.library.subscribe(to: server.url("/atom")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(atom.title == "Atom Named")

        server.setRoute("/chain", page("application/rss+xml", "/other-page"))
        server.setRoute("/other-page", page("application/rss+xml", "/feed.xml"))
        do {
            _ = try await fixture.library.subscribe(to: server.url("/chain"))
            Issue.record("a page naming a page must fail")
        } catch let error as FeedError {
            #expect(error.code == .htmlPage)
            #expect(error.message == "the page \(server.url("/chain").absoluteString) names its feed \(server.url("/other-page").absoluteString), "
                    + "but that is a web page too, not a feed; give the feed's own address")
        }
        #expect(server.requests(for: "/feed.xml").count == 1, "no second step")
        #expect(try fixture.library.podcasts().count == 2)
        await fixture.manager.shutdown()
    }

    @Test func movedFeedsUpdateTheStoredURL() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        server.setRoute("/old", Route(body: .bytes([]), faults: [.redirect(to: "/new", status: 301)]))
        server.setRoute("/new", feedRoute(rss(items: [("a", "One", "https://cdn.example.com/1.mp3")])))
        guard case .subscribed(let moved, _) = try await fixture.library.subscribe(to: server.url("/old")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(moved.feedURL == server.url("/new"), "a 301 updates the stored URL")

        server.setRoute("/temporary", Route(body: .bytes([]), faults: [.redirect(to: "/elsewhere", status: 302)]))
        server.setRoute("/elsewhere", feedRoute(rss(title: "Other", items: [])))
        guard case .subscribed(let kept, _) = try await fixture.library.subscribe(to: server.url("/temporary")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(kept.feedURL == server.url("/temporary"), "a 302 does not")

        let announced = server.url("/announced")
        server.setRoute("/announced", feedRoute(rss(title: "Other", items: [])))
        server.setRoute("/elsewhere", feedRoute(rss(title: "Other", items: [], extraChannel: "<itunes:new-feed-url>\(announced.absoluteString)</itunes:new-feed-url>")))
        let summary = try await fixture.library.refresh(kept.id)
        #expect(summary.movedTo == announced)
        #expect(try fixture.library.podcast(withID: kept.id)?.feedURL == announced)
        await fixture.manager.shutdown()
    }

    @Test func errorsAreTypedRedactedAndChangeNothing() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        server.setRoute("/private", Route.html(status: 404, "<html>no</html>"))
        var components = URLComponents(url: server.url("/private"), resolvingAgainstBaseURL: false)!
        components.user = "alice"
        components.password = "s3cret"
        components.query = "token=abcdef"
        do {
            _ = try await fixture.library.subscribe(to: components.url!)
            Issue.record("a 404 must fail")
        } catch let error as FeedError {
            #expect(error.code == .httpStatus)
            #expect(error.httpStatus == 404)
            #expect(!error.message.contains("s3cret") && !error.message.contains("abcdef"))
        }
        do {
            _ = try await fixture.library.subscribe(to: URL(string: "ftp://example.com/feed")!)
            Issue.record("ftp must fail")
        } catch let error as FeedError {
            #expect(error.code == .unsupportedScheme)
        }
        #expect(try fixture.library.podcasts().isEmpty)
        await fixture.manager.shutdown()
    }

    @Test func refreshAllRunsConcurrently() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let gate = Gate()
        defer { gate.open() }
        for index in 0..<12 {
            var route = Route(body: .bytes(Array(rss(title: "Show \(index)", items: [("g\(index)", "E", "https://cdn.example.com/\(index).mp3")]).utf8)),
                              contentType: "application/rss+xml")
            server.setRoute("/f\(index)", route)
            _ = try await fixture.library.subscribe(to: server.url("/f\(index)"))
            // Refreshed, its answer waits until a second feed has been asked for meanwhile.
            route.gate = gate
            server.setRoute("/f\(index)", route)
        }
        server.resetStatistics()
        // The library is used by this one task alone, then by the test again once it is done.
        nonisolated(unsafe) let library = fixture.library
        let refreshing = Task { try await library.refreshAll() }
        let deadline = Date().addingTimeInterval(30)
        while server.requests.count < 2 && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        gate.open()
        let results = try await refreshing.value
        #expect(results.count == 12)
        #expect(results.allSatisfy { if case .success = $0.1 { return true } else { return false } })
        #expect(server.maxConcurrentRequests > 1, "feeds are fetched concurrently")
        await fixture.manager.shutdown()
    }

    @Test func findingPodcastsAndUnsubscribing() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        server.setRoute("/a", feedRoute(rss(title: "The Daily Swift", items: [("1", "x", "https://c/1.mp3")])))
        server.setRoute("/b", feedRoute(rss(title: "Swift Weekly", items: [("2", "y", "https://c/2.mp3")])))
        _ = try await fixture.library.subscribe(to: server.url("/a"))
        _ = try await fixture.library.subscribe(to: server.url("/b"))
        #expect(try fixture.library.findPodcast("daily").title == "The Daily Swift")
        #expect(try fixture.library.findPodcast("2").title == "Swift Weekly")
        #expect(throws: LibraryError.self) { try fixture.library.findPodcast("swift") }
        #expect(throws: LibraryError.self) { try fixture.library.findPodcast("nothing") }
        try fixture.library.unsubscribe(1)
        #expect(try fixture.library.podcasts().map(\.id) == [2])
        #expect(try fixture.database.scalarInt("SELECT count(*) FROM episodes WHERE podcast_id = 1") == 0)
        await fixture.manager.shutdown()
    }

    @Test func opmlRoundTrip() throws {
        let outlines = [OPML.Outline(title: "A & B <show>", feedURL: URL(string: "https://example.com/a.xml")!, siteURL: URL(string: "https://example.com/")),
                        OPML.Outline(title: nil, feedURL: URL(string: "https://example.com/b.xml?x=1&y=2")!)]
        let text = OPML.write(outlines)
        let read = try OPML.read(Data(text.utf8))
        #expect(read.map(\.feedURL) == outlines.map(\.feedURL))
        #expect(read[0].title == "A & B <show>")
        #expect(throws: OPML.ReadError.self) { try OPML.read(Data("<html><body/></html>".utf8)) }
        #expect(throws: OPML.ReadError.self) { try OPML.read(Data("not xml".utf8)) }
        // An <opml> inside another document is not a list.
        let buried = "<config><opml version=\"2.0\"><body><outline xmlUrl=\"https://example.com/c.xml\"/></body></opml></config>"
        #expect(throws: OPML.ReadError(.notOPML, "not an OPML subscription list: its root element is <config>; an OPML subscription list is an XML file with <opml> at its root")) {
            try OPML.read(Data(buried.utf8))
        }
    }

    @Test func aFeedCannotPointMonsoonAtLocalFiles() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-secret-\(UUID().uuidString).xml")
        try rss(title: "Secret", items: [("s", "Local secret", "https://cdn.example.com/s.mp3")]).write(to: secret, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: secret) }
        server.setRoute("/feed", feedRoute(rss(items: [("a", "One", "https://cdn.example.com/1.mp3")],
                                               extraChannel: "<atom:link rel=\"next\" href=\"\(secret.absoluteString)\"/>")))
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(try fixture.library.episodes(of: podcast.id).map(\.title) == ["One"])
        await #expect(throws: FeedError.self) { _ = try await fixture.library.subscribe(to: secret) }
        await fixture.manager.shutdown()
    }

    @Test func anOldURLAnnouncingASubscribedFeedIsTheSamePodcast() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        server.setRoute("/new", feedRoute(rss(items: [("a", "One", "https://cdn.example.com/1.mp3")])))
        server.setRoute("/old", feedRoute(rss(items: [("a", "One", "https://cdn.example.com/1.mp3")],
                                              extraChannel: "<itunes:new-feed-url>\(server.url("/new").absoluteString)</itunes:new-feed-url>")))
        _ = try await fixture.library.subscribe(to: server.url("/new"))
        guard case .alreadySubscribed = try await fixture.library.subscribe(to: server.url("/old")) else {
            Issue.record("the old URL must resolve to the existing subscription"); return
        }
        #expect(try fixture.library.podcasts().count == 1)
        await fixture.manager.shutdown()
    }

    @Test func redactionCatchesCommonSecrets() {
        #expect(Redaction.redact("https://h.example/feed?auth_token=abc&private_token=def&token-hash=ghi&page=2") ==
                "https://h.example/feed?auth_token=***&private_token=***&token-hash=***&page=2")
        #expect(!Redaction.redact("user:s3cret@host.example/feed").contains("s3cret"))
        #expect(!Redaction.redactText("cannot fetch https://a:b@h.example/x?key=zzz: refused").contains("zzz"))
        #expect(!Redaction.redactText("cannot fetch https://a:b@h.example/x?key=zzz: refused").contains("a:b@"))
    }

    @Test func theRedactionMarkerIsRecognized() {
        for text in ["https://***:***@h.example/feed", "https://***@h.example/feed", "https://h.example/feed?page=2&token=***",
                     "https://%2A%2A%2A:%2A%2A%2A@h.example/feed"] {
            #expect(Redaction.hasRedactionMarker(URL(string: text)!), "\(text)")
        }
        for text in ["https://h.example/feed?q=***b", "https://h.example/***", "https://alice:pw@h.example/feed?token=abc"] {
            #expect(!Redaction.hasRedactionMarker(URL(string: text)!), "\(text)")
        }
        let redacted = Redaction.redact("https://alice:pw@h.example/feed?token=abc")
        #expect(Redaction.hasRedactionMarker(URL(string: redacted)!))
    }
}
