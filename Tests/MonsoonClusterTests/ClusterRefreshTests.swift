import Foundation
@testable import MonsoonCluster
import MonsoonEngine
@testable import MonsoonPodcasts
import MonsoonStore
import MonsoonTestServer
import Testing

/// A feed's refresh in the shared library, against a real PostgreSQL and the loopback server:
/// each new episode queued once, named as a local archive names it, under the feed's rules;
/// nothing more on a 304; a stale lease writes nothing.
@Suite(.temporaryPostgres) struct ClusterRefreshTests {
    /// Items whose names collide (two "Intro"s on one day), one that renders to an archive's own
    /// name ("feed"), and one whose title holds a slash.
    static let items = [
        TestItem("e5", "Q/A", "5.mp3", day: 15), TestItem("e4", "feed", "4.mp3", day: 14), TestItem("e3", "Intro", "3.mp3", day: 13),
        TestItem("e2", "Intro", "2.mp3", day: 13), TestItem("e1", "Intro", "1.mp3", day: 11),
    ]

    /// The paths a local archive gives the feed at `url` with `template`: subscribed in a library
    /// of its own, every episode queued, their downloads' destinations under the root.
    static func localPaths(_ url: URL, template: NamingTemplate) async throws -> [String: String] {
        let manager = DownloadManager()
        let database = try Database(path: ":memory:")
        let library = try PodcastLibrary(database: database, manager: manager)
        guard case .subscribed(let podcast, _) = try await library.subscribe(to: url) else { throw PostgresTestError("not subscribed") }
        let queue = try EpisodeQueue(database: database)
        let episodes = try library.episodes(of: podcast.id)
        try queue.add(episodes.map(\.id))
        var paths: [String: String] = [:]
        for request in try queue.requests(root: "/root", template: template, allowingPrivate: false) {
            guard case .named(let folder, let stem) = request.destination, let id = EpisodeQueue.episodeID(of: request.id),
                  let episode = episodes.first(where: { $0.id == id }) else { continue }
            paths[episode.guid ?? ""] = String(folder.dropFirst("/root/".count)) + "/" + stem
        }
        _ = await manager.shutdown()
        return paths
    }

    @Test func eachNewEpisodeIsQueuedOnceNamedAsALocalArchiveNamesIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/feed.xml", feedRoute(rssFeed(Self.items)))
        let url = server.url("/feed.xml")
        let fixture = try await SharedLibraryFixture()
        let template = "{podcast}/{title}.{ext}"
        let feed = try #require(try await fixture.add([url], rules: ArchiveRules(template: template, maxSize: 5_000_000)).first)
        #expect(feed.isNew && feed.refreshQueued)
        let outcome = try await fixture.refresh(feed.feedID)
        #expect(outcome == .refreshed(.init(queued: 5, refused: 0, pages: 1, folder: "Show", pageError: nil, requeued: false)))

        let local = try await Self.localPaths(url, template: try NamingTemplate(template))
        let guids = try await onThread {
            try fixture.queue.connection.execute("SELECT e.metadata ->> 'guid', f.folder || '/' || e.file_name FROM monsoon_episodes e JOIN monsoon_feeds f ON f.id = e.feed_id")
                .rows.map { (try $0.string(0) ?? "", try $0.string(1) ?? "") }
        }
        #expect(Dictionary(uniqueKeysWithValues: guids) == local)
        #expect(local == ["e1": "Show/Intro", "e2": "Show/Intro (2)", "e3": "Show/Intro (3)", "e4": "Show/feed (2)", "e5": "Show/Q-A"])

        // One job per episode, claimed oldest first (the same day: the feed's order), on the enclosures' host.
        let downloads = try await fixture.downloads()
        #expect(downloads.map(\.title) == ["Intro", "Intro", "Intro", "feed", "Q/A"])
        #expect(downloads.map(\.priority) == [0, 1, 2, 3, 4])
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_jobs WHERE kind = 'download' AND host = 'cdn.example.com' AND key = 'episode:' || episode_id") == 5)
        // A worker's claim carries the path and the feed's size cap.
        let claimed = try await onThread {
            try fixture.queue.connection.execute("UPDATE monsoon_hosts SET held_until = NULL, max_connections = 10")
            return try fixture.queue.claim(slots: 10)
        }
        #expect(Set(claimed.compactMap(\.path)) == Set(local.values) && claimed.allSatisfy { $0.maxBytes == 5_000_000 })
        let metadata = try await onThread { try fixture.queue.connection.execute("SELECT metadata::text FROM monsoon_episodes WHERE metadata ->> 'guid' = 'e5'").first?.string(0) }
        #expect(metadata == #"{"guid": "e5", "title": "Q/A", "mediaType": "audio/mpeg", "published": "2024-06-15T10:00:00Z"}"#)
        _ = await fixture.manager.shutdown()
    }

    @Test func theRulesChooseAndOrderWhatIsQueued() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let route = feedRoute(rssFeed([
            TestItem("d", "Keep three", "d.mp3", day: 4), TestItem("c", "Skip", "c.mp3", day: 3), TestItem("b", "Keep two", "b.mp3", day: 2),
            TestItem("a", "Keep one", "a.mp3", day: 1), TestItem("x", "Keep, but no file", nil, day: 5),
        ]), etag: "\"r1\"")
        server.setRoute("/feed.xml", route)
        let url = server.url("/feed.xml")
        let rules = ArchiveRules(match: "^keep", newestFirst: true)
        let fixture = try await SharedLibraryFixture()
        let feed = try #require(try await fixture.add([url], rules: rules).first)
        guard case .refreshed(let summary) = try await fixture.refresh(feed.feedID) else { Issue.record("not refreshed"); return }
        #expect(summary.queued == 3)
        // Newest first: the claim order is the archive's.
        #expect(try await fixture.downloads().map(\.title) == ["Keep three", "Keep two", "Keep one"])
        #expect(try await fixture.downloads().map(\.path) == ["Show/2024-06-04 - Keep three", "Show/2024-06-02 - Keep two", "Show/2024-06-01 - Keep one"])

        // Archived again with other rules while its refresh waits for the server: that refresh
        // (a 304 to its validators) queues itself again, and the next one reads the feed whole
        // with the new rules.
        var held = feedRoute(rssFeed([]), etag: "\"r1\"")
        let gate = Gate()
        defer { gate.open() }
        held.gate = gate
        server.setRoute("/feed.xml", held)
        try await fixture.add([url], rules: rules)
        let running = try await fixture.claimRefresh(of: feed.feedID)
        let database = fixture.url
        let before = server.requests(for: "/feed.xml").count
        // Once the refresh's request is held, the change; then the answer.
        let change = Task {
            defer { gate.open() }
            try await waitUntil("the refresh waiting for the server") { server.requests(for: "/feed.xml").count > before }
            return try await onThread { try SharedLibrary.addFeeds([url], rules: ArchiveRules(), on: try PostgresConnection(database)) }
        }
        #expect(try await fixture.run(running) == .notModified)
        #expect(try await change.value.first?.refreshQueued == false)
        server.setRoute("/feed.xml", route)
        let asked = server.requests(for: "/feed.xml").count
        guard case .refreshed(let fresh) = try await fixture.refresh(feed.feedID) else { Issue.record("not refreshed"); return }
        #expect(!fresh.requeued && fresh.queued == 1)
        #expect(server.requests(for: "/feed.xml").count == asked + 1 && server.requests(for: "/feed.xml").last?.headers["if-none-match"] == nil)
        // Oldest first now: after the feed's earlier downloads.
        #expect(try await fixture.downloads().last.map { [$0.title, String($0.priority)] } == ["Skip", "3"])
        _ = await fixture.manager.shutdown()
    }

    /// A job carries the feed's size cap, and new rules change it: the downloads waiting take the
    /// new cap at once, and those a refresh running meanwhile (with the old rules) queues take it too.
    @Test func newRulesGiveTheFeedsDownloadsTheirSizeCap() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let older = [TestItem("b", "Two", "b.mp3", day: 2), TestItem("a", "One", "a.mp3", day: 1)]
        server.setRoute("/feed.xml", feedRoute(rssFeed(older)))
        let url = server.url("/feed.xml")
        let fixture = try await SharedLibraryFixture()
        let feed = try #require(try await fixture.add([url], rules: ArchiveRules(maxSize: 5_000_000)).first)
        guard case .refreshed(let first) = try await fixture.refresh(feed.feedID) else { Issue.record("not refreshed"); return }
        #expect(first.queued == 2)

        // A new episode, read by a refresh held at the server while the feed is archived with a new cap.
        var held = feedRoute(rssFeed([TestItem("c", "Three", "c.mp3", day: 3)] + older))
        let gate = Gate()
        defer { gate.open() }
        held.gate = gate
        server.setRoute("/feed.xml", held)
        try await fixture.add([url], rules: ArchiveRules(maxSize: 5_000_000))
        let running = try await fixture.claimRefresh(of: feed.feedID)
        let (database, before) = (fixture.url, server.requests(for: "/feed.xml").count)
        let change = Task {
            defer { gate.open() }
            try await waitUntil("the refresh waiting for the server") { server.requests(for: "/feed.xml").count > before }
            return try await onThread { try SharedLibrary.addFeeds([url], rules: ArchiveRules(maxSize: 7_000_000), on: try PostgresConnection(database)) }
        }
        guard case .refreshed(let second) = try await fixture.run(running) else { Issue.record("not refreshed"); return }
        #expect(second.queued == 1 && second.requeued)
        _ = try await change.value
        let claimed = try await onThread {
            try fixture.queue.connection.execute("UPDATE monsoon_hosts SET held_until = NULL, max_connections = 10")
            return try fixture.queue.claim(slots: 10).filter { $0.kind == .download }
        }
        #expect(Set(claimed.map(\.url)) == Set(["a", "b", "c"].map { "https://cdn.example.com/\($0).mp3" }))
        #expect(claimed.count == 3 && claimed.allSatisfy { $0.maxBytes == 7_000_000 }, "\(claimed.map(\.maxBytes))")
        _ = await fixture.manager.shutdown()
    }

    /// Feeds whose titles come out the same get folders of their own, as a local archive's podcasts do.
    @Test func feedsOfOneTitleGetTwoFolders() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/one.xml", feedRoute(rssFeed(title: "Daily News", [TestItem("a", "A", "a.mp3", day: 1)])))
        server.setRoute("/two.xml", feedRoute(rssFeed(title: "daily news", [TestItem("a", "A", "a.mp3", day: 1)])))
        let fixture = try await SharedLibraryFixture()
        let feeds = try await fixture.add([server.url("/one.xml"), server.url("/two.xml")])
        for feed in feeds { _ = try await fixture.refresh(feed.feedID) }
        #expect(try await fixture.downloads().map(\.path).sorted() == ["Daily News/2024-06-01 - A", "daily news (2)/2024-06-01 - A"])
        _ = await fixture.manager.shutdown()
    }

    /// A 304 adds nothing; a feed that gains two items queues exactly those two, after the
    /// others (oldest first); a feed archived again with other rules is refreshed with them.
    @Test func laterRefreshesQueueOnlyWhatIsNew() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let first = (1...3).map { TestItem("g\($0)", "Episode \($0)", "\($0).mp3", day: $0) }.reversed()
        server.setRoute("/feed.xml", feedRoute(rssFeed(Array(first)), etag: "\"v1\""))
        let url = server.url("/feed.xml")
        let fixture = try await SharedLibraryFixture()
        let feed = try #require(try await fixture.add([url]).first)
        guard case .refreshed(let summary) = try await fixture.refresh(feed.feedID) else { Issue.record("not refreshed"); return }
        #expect(summary.queued == 3)

        // Archived again: the finished refresh is queued again, and the server answers 304.
        #expect(try await fixture.add([url]).first?.refreshQueued == true)
        #expect(try await fixture.refresh(feed.feedID) == .notModified)
        #expect(server.requests(for: "/feed.xml").last?.headers["if-none-match"] == "\"v1\"")
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_jobs WHERE kind = 'download'") == 3)

        let more = (1...5).map { TestItem("g\($0)", "Episode \($0)", "\($0).mp3", day: $0) }.reversed()
        server.setRoute("/feed.xml", feedRoute(rssFeed(Array(more)), etag: "\"v2\""))
        try await fixture.add([url])
        guard case .refreshed(let again) = try await fixture.refresh(feed.feedID) else { Issue.record("not refreshed"); return }
        #expect(again.queued == 2)
        let downloads = try await fixture.downloads()
        #expect(downloads.map(\.title) == (1...5).map { "Episode \($0)" })
        #expect(downloads.map(\.priority) == [0, 1, 2, 3, 4])
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_feeds WHERE etag = '\"v2\"' AND refreshed_at IS NOT NULL") == 1)
        _ = await fixture.manager.shutdown()
    }

    /// Two leases of one refresh (the first expired, the job taken back and claimed again): the
    /// stale one's transaction rolls back whole, and the episodes are queued once.
    @Test func aStaleLeaseWritesNothing() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/feed.xml", feedRoute(rssFeed(Self.items)))
        let fixture = try await SharedLibraryFixture()
        let feed = try #require(try await fixture.add([server.url("/feed.xml")]).first)
        let stale = try await fixture.claimRefresh(of: feed.feedID)
        let other = try await onThread { () -> JobQueue in
            try fixture.queue.connection.execute("UPDATE monsoon_jobs SET lease_expires_at = now() - interval '1 second'")
            let other = JobQueue(connection: try PostgresConnection(fixture.url), worker: "w2")
            #expect(try other.reapExpiredLeases() == (1, 0))
            try other.connection.execute("UPDATE monsoon_jobs SET run_at = now()")
            #expect(try other.promoteDueJobs() == 1)
            return other
        }
        let fresh = try await fixture.claimRefresh(of: feed.feedID, on: other)
        #expect(fresh.lease.token > stale.lease.token)
        // The fresh lease holds the job: the stale one's writes roll back, before and after the fresh one's.
        await #expect { try await fixture.run(stale) } throws: { ($0 as? SharedLibraryError)?.code == .leaseLost }
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_episodes") == 0)
        guard case .refreshed(let summary) = try await fixture.run(fresh, on: other) else { Issue.record("not refreshed"); return }
        await #expect { try await fixture.run(stale) } throws: { ($0 as? SharedLibraryError)?.code == .leaseLost }
        #expect(summary.queued == 5)
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_episodes") == 5)
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_jobs WHERE kind = 'download'") == 5)
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_jobs WHERE kind = 'refresh' AND state = 'completed' AND lease_token = \(fresh.lease.token)") == 1)
        _ = await fixture.manager.shutdown()
    }

    @Test func thePagesOfAPagedFeedAreAllQueued() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/feed.xml", feedRoute(rssFeed([TestItem("p4", "Four", "4.mp3", day: 4), TestItem("p3", "Three", "3.mp3", day: 3)], next: "/page2.xml")))
        server.setRoute("/page2.xml", feedRoute(rssFeed([TestItem("p2", "Two", "2.mp3", day: 2), TestItem("p1", "One", "1.mp3", day: 1)])))
        let fixture = try await SharedLibraryFixture()
        let feed = try #require(try await fixture.add([server.url("/feed.xml")]).first)
        guard case .refreshed(let summary) = try await fixture.refresh(feed.feedID) else { Issue.record("not refreshed"); return }
        #expect(summary.pages == 2 && summary.queued == 4 && summary.pageError == nil)
        #expect(try await fixture.downloads().map(\.title) == ["One", "Two", "Three", "Four"])

        // A later page that cannot be read: the pages before it are queued, and the validators
        // are not kept, so the next refresh reads the feed whole.
        server.setRoute("/feed.xml", feedRoute(rssFeed([TestItem("p5", "Five", "5.mp3", day: 5)], next: "/page3.xml"), etag: "\"v3\""))
        server.setRoute("/page3.xml", Route.html(status: 500, "broken"))
        try await fixture.add([server.url("/feed.xml")])
        guard case .refreshed(let partial) = try await fixture.refresh(feed.feedID) else { Issue.record("not refreshed"); return }
        #expect(partial.queued == 1 && partial.pageError != nil)
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_feeds WHERE etag IS NULL") == 1)
        _ = await fixture.manager.shutdown()
    }

    /// A new recording under a re-used guid, listed above the old one: the new one is queued,
    /// the old one is not queued again (the library's placement).
    @Test func aReusedGuidQueuesTheNewRecordingOnly() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/feed.xml", feedRoute(rssFeed([TestItem("dup", "Old", "old.mp3", day: 1)])))
        let fixture = try await SharedLibraryFixture()
        let feed = try #require(try await fixture.add([server.url("/feed.xml")]).first)
        _ = try await fixture.refresh(feed.feedID)
        server.setRoute("/feed.xml", feedRoute(rssFeed([TestItem("dup", "New", "new.mp3", day: 2), TestItem("dup", "Old", "old.mp3", day: 1)])))
        try await fixture.add([server.url("/feed.xml")])
        guard case .refreshed(let summary) = try await fixture.refresh(feed.feedID) else { Issue.record("not refreshed"); return }
        #expect(summary.queued == 1)
        #expect(try await fixture.downloads().map(\.identity) == ["dup", "guid:dup|enclosure:https://cdn.example.com/new.mp3"])
        _ = await fixture.manager.shutdown()
    }

    /// Episodes stored by the parser before issue 50 (RSS 1.0 items under their enclosure, not their `rdf:about`) are
    /// the same episodes to a later refresh: none is queued again.
    @Test func anEpisodeStoredUnderItsFormerIdentityIsNotQueuedAgain() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let feed = """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
            <channel rdf:about="https://example.org/"><title>Show</title></channel>
            <item rdf:about="https://example.org/1"><title>One</title><enclosure url="https://cdn.example.com/1.mp3" type="audio/mpeg"/></item>
            <item rdf:about="https://example.org/2"><title>Two</title><enclosure url="https://cdn.example.com/2.mp3" type="audio/mpeg"/></item>
            </rdf:RDF>
            """
        server.setRoute("/feed.xml", feedRoute(feed, etag: "\"v1\""))
        let fixture = try await SharedLibraryFixture()
        let added = try #require(try await fixture.add([server.url("/feed.xml")]).first)
        _ = try await fixture.refresh(added.feedID)
        let parsed = try FeedParser.parse(Data(feed.utf8), url: server.url("/feed.xml"))
        for episode in parsed.episodes {
            let former = try #require(episode.formerIdentity)
            _ = try await onThread { try fixture.queue.connection.execute("UPDATE monsoon_episodes SET identity = $1 WHERE identity = $2", [former, episode.identity]) }
        }
        server.setRoute("/feed.xml", feedRoute(feed, etag: "\"v2\""))
        try await fixture.add([server.url("/feed.xml")])
        guard case .refreshed(let summary) = try await fixture.refresh(added.feedID) else { Issue.record("not refreshed"); return }
        #expect(summary.queued == 0)
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_episodes") == 2)
        #expect(Set(try await fixture.downloads().map(\.identity)) == Set(parsed.episodes.compactMap(\.formerIdentity)))
        _ = await fixture.manager.shutdown()
    }

    /// Two items without guids whose former identity was one (the same `media:content` before their enclosures, so the
    /// earlier parser stored one row): the first is that row, the second a new episode, as the library decides.
    @Test func aFormerIdentityIsTheFirstItemsOnly() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let item = { (name: String) in
            "<item><title>\(name)</title><media:content url=\"https://cdn.example.com/p.mp3\" type=\"audio/mpeg\"/>"
                + "<enclosure url=\"https://cdn.example.com/\(name).mp3\" type=\"audio/mpeg\"/></item>"
        }
        let feed = "<rss xmlns:media=\"http://search.yahoo.com/mrss/\"><channel><title>Show</title>\(item("a"))\(item("b"))</channel></rss>"
        server.setRoute("/feed.xml", feedRoute(feed, etag: "\"v1\""))
        let fixture = try await SharedLibraryFixture()
        let added = try #require(try await fixture.add([server.url("/feed.xml")]).first)
        _ = try await fixture.refresh(added.feedID)
        let parsed = try FeedParser.parse(Data(feed.utf8), url: server.url("/feed.xml"))
        let former = try #require(parsed.episodes.first?.formerIdentity)
        #expect(parsed.episodes.map(\.formerIdentity) == [former, former])
        // As the earlier parser left it: one row, under the former identity.
        _ = try await onThread {
            try fixture.queue.connection.execute("DELETE FROM monsoon_jobs WHERE kind = 'download'")
            try fixture.queue.connection.execute("DELETE FROM monsoon_episodes WHERE identity = $1", [parsed.episodes[1].identity])
            try fixture.queue.connection.execute("UPDATE monsoon_episodes SET identity = $1 WHERE identity = $2", [former, parsed.episodes[0].identity])
        }
        server.setRoute("/feed.xml", feedRoute(feed, etag: "\"v2\""))
        try await fixture.add([server.url("/feed.xml")])
        guard case .refreshed(let summary) = try await fixture.refresh(added.feedID) else { Issue.record("not refreshed"); return }
        #expect(summary.queued == 1)
        #expect(try await fixture.downloads().map(\.identity) == [parsed.episodes[1].identity])
        _ = await fixture.manager.shutdown()
    }

    /// Failures are the worker's to act on: returned, the job left running.
    @Test func aFeedThatCannotBeReadIsAnOutcome() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/gone.xml", Route.html(status: 404, "gone"))
        server.setRoute("/busy.xml", Route.html(status: 503, "busy"))
        server.setRoute("/page.xml", Route.html(status: 200, "<html><body>hello</body></html>"))
        let fixture = try await SharedLibraryFixture()
        let feeds = try await fixture.add(["/gone.xml", "/busy.xml", "/page.xml"].map(server.url))
        let jobs = try await onThread {
            try ClusterAdmin(connection: fixture.queue.connection).setLimits(host: NewJob.host(of: server.url("/")), maxConnections: 3, minIntervalMilliseconds: nil)
            return try fixture.queue.claim(slots: 16)
        }
        #expect(jobs.count == 3)
        var outcomes: [Int64: ClusterRefresh.Outcome] = [:]
        for job in jobs { outcomes[job.feedID ?? 0] = try await fixture.run(job) }
        guard case .failedPermanently(let reason) = outcomes[feeds[0].feedID] else { Issue.record("\(outcomes)"); return }
        #expect(reason.contains("404"), "\(reason)")
        guard case .failedTransiently = outcomes[feeds[1].feedID], case .failedPermanently = outcomes[feeds[2].feedID] else { Issue.record("\(outcomes)"); return }
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_jobs WHERE state = 'running'") == 3)
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_feeds WHERE folder IS NULL") == 3)
        _ = await fixture.manager.shutdown()
    }
}
