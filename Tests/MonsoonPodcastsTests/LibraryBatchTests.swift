import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

private enum GUIDColumn: Int, TableColumn { case guid }

/// Feeds are stored a batch at a time as they are parsed: the rules of identity, duplicates, re-used
/// guids, pages and refreshes hold across batch boundaries. Batches of one to three items here, so
/// the items that matter to each other fall into different batches.
@Suite struct LibraryBatchTests {
    /// An item of guid `guid` with the enclosure `https://cdn.example.com/NAME.mp3` (or `url` as given).
    static func item(_ guid: String?, _ title: String, _ name: String, date: Int = 1) -> String {
        var text = "<item><title>\(title)</title>"
        if let guid { text += "<guid>\(guid)</guid>" }
        let url = name.contains("://") ? name : "https://cdn.example.com/\(name).mp3"
        return text + "<enclosure url=\"\(url)\" type=\"audio/mpeg\"/><pubDate>Mon, \(10 + date) Jun 2024 10:00:00 GMT</pubDate></item>\n"
    }

    static func feed(_ items: String, next: String? = nil) -> String {
        rss(items: [], extraChannel: (next.map { "<atom:link rel=\"next\" href=\"\($0)\"/>" } ?? "") + "\n" + items)
    }

    static func library(batchSize: Int) throws -> LibraryFixture {
        let fixture = try LibraryFixture()
        fixture.library.batchSize = batchSize
        return fixture
    }

    @Test(arguments: [1, 2, 3])
    func duplicatesAreFoundAcrossBatches(batchSize: Int) async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try Self.library(batchSize: batchSize)
        let items = Self.item("a", "A", "a") + Self.item("b", "B", "b") + Self.item("c", "C", "c")
            + Self.item("a", "A again", "https://dts.podtrac.com/redirect.mp3/cdn.example.com/a.mp3") + Self.item("d", "D", "d")
            + Self.item("b", "B again", "b") + Self.item(nil, "No guid", "e") + Self.item(nil, "No guid again", "https://op3.dev/e/cdn.example.com/e.mp3")
        server.setRoute("/feed", feedRoute(Self.feed(items)))
        guard case .subscribed(let podcast, let summary) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(summary.added == 5 && summary.duplicates == 3)
        #expect(try fixture.library.episodes(of: podcast.id).compactMap(\.title).sorted() == ["A", "B", "C", "D", "No guid"])
        let again = try await fixture.library.refresh(podcast.id)
        #expect(again.added == 0 && again.updated == 0 && again.duplicates == 3)
        await fixture.manager.shutdown()
    }

    /// A guid re-used with another enclosure on a later page, in a later batch, is another recording;
    /// an exact repeat on a later page is a duplicate; refreshing changes nothing.
    @Test(arguments: [1, 2])
    func reusedGuidsAcrossBatchesAndPages(batchSize: Int) async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try Self.library(batchSize: batchSize)
        server.setRoute("/feed", feedRoute(Self.feed(Self.item("g1", "A", "a") + Self.item("g2", "B", "b") + Self.item("g1", "A2", "a2"), next: "/feed2")))
        server.setRoute("/feed2", feedRoute(Self.feed(Self.item("g1", "C", "c") + Self.item("g2", "B", "https://chrt.fm/track/X/cdn.example.com/b.mp3")
                                                      + Self.item("g1", "A2 again", "a2") + Self.item("g3", "D", "d"))))
        guard case .subscribed(let podcast, let summary) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(summary.pages == 2 && summary.added == 5 && summary.duplicates == 2)
        let episodes = try fixture.library.episodes(of: podcast.id)
        #expect(Set(episodes.map(\.identity)) == ["g1", "g2", "g3", "guid:g1|enclosure:https://cdn.example.com/a2.mp3",
                                                   "guid:g1|enclosure:https://cdn.example.com/c.mp3"])
        let again = try await fixture.library.refresh(podcast.id)
        #expect(again.added == 0 && again.updated == 0 && again.duplicates == 2)
        #expect(try fixture.library.episodes(of: podcast.id).map(\.id).sorted() == episodes.map(\.id).sorted())
        await fixture.manager.shutdown()
    }

    /// A refresh that changes items in later batches updates those rows (and only them), never the
    /// user's state; an item that only moved is saved in place but is not an update.
    @Test(arguments: [1, 3])
    func aRefreshUpdatesRowsInLaterBatches(batchSize: Int) async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try Self.library(batchSize: batchSize)
        let items = (0..<10).map { Self.item("g\($0)", "Episode \($0)", "e\($0)", date: $0) }
        server.setRoute("/feed", feedRoute(Self.feed(items.joined())))
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        let before = try fixture.library.episodes(of: podcast.id)
        let eight = try #require(before.first { $0.guid == "g8" })
        try fixture.database.run("UPDATE episodes SET position = 30, played = 1, queue_position = 1 WHERE id = ?", eight.id)

        var changed = items
        changed[8] = Self.item("g8", "Episode 8 (fixed)", "e8", date: 8)
        changed[9] = Self.item("g9", "Episode 9", "e9-remastered", date: 9)
        changed.swapAt(0, 1)   // moved, not changed
        changed.append(Self.item("g10", "Episode 10", "e10", date: 10))
        server.setRoute("/feed", feedRoute(Self.feed(changed.joined())))
        let summary = try await fixture.library.refresh(podcast.id)
        #expect(summary.added == 1 && summary.updated == 2)
        let after = try fixture.library.episodes(of: podcast.id)
        let updated = try #require(after.first { $0.id == eight.id })
        #expect(updated.title == "Episode 8 (fixed)" && updated.position == 30 && updated.played && updated.queuePosition == 1)
        #expect(after.first { $0.guid == "g9" }?.enclosureURL?.absoluteString == "https://cdn.example.com/e9-remastered.mp3")
        #expect(after.first { $0.guid == "g9" }?.id == before.first { $0.guid == "g9" }?.id, "re-uploaded: the same row")
        let order = try fixture.database.statement("SELECT guid FROM episodes WHERE podcast_id = ? ORDER BY feed_order").query([podcast.id], reading: GUIDColumn.self) { $0.text(.guid) ?? "" }
        #expect(order == ["g1", "g0", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9", "g10"])
        await fixture.manager.shutdown()
    }

    /// Every enclosure changed (a publisher moved to another host): each item is its stored episode
    /// re-uploaded, kept in its row, whatever the batches.
    @Test func everyEnclosureChangedKeepsEveryRow() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try Self.library(batchSize: 7)
        server.setRoute("/feed", feedRoute(Self.feed((0..<50).map { Self.item("g\($0)", "E\($0)", "old/\($0)") }.joined())))
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        let ids = try fixture.library.episodes(of: podcast.id).map { ($0.guid ?? "", $0.id) }
        server.setRoute("/feed", feedRoute(Self.feed((0..<50).map { Self.item("g\($0)", "E\($0)", "https://media.example.org/\($0).mp3") }.joined())))
        let summary = try await fixture.library.refresh(podcast.id)
        #expect(summary.added == 0 && summary.updated == 50)
        let after = try fixture.library.episodes(of: podcast.id)
        #expect(after.map { ($0.guid ?? "", $0.id) }.sorted { $0.1 < $1.1 }.map(\.1) == ids.map(\.1).sorted())
        #expect(after.allSatisfy { $0.enclosureURL?.host == "media.example.org" && $0.identity == $0.guid })
        #expect(try fixture.database.scalarInt("SELECT count(*) FROM episodes WHERE identity LIKE ' %'") == 0, "no placeholder left")
        let order = try fixture.database.statement("SELECT guid FROM episodes WHERE podcast_id = ? ORDER BY feed_order").query([podcast.id], reading: GUIDColumn.self) { $0.text(.guid) ?? "" }
        #expect(order == (0..<50).map { "g\($0)" })
        await fixture.manager.shutdown()
    }

    /// A new recording that re-uses an old guid is put on top, on the first page; the old recording
    /// follows on a later page, in a later batch: the old one keeps its row and user state, the new
    /// one is added, on this refresh and the next.
    @Test(arguments: [1, 2])
    func aReusedGuidOnTopWaitsForALaterPage(batchSize: Int) async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try Self.library(batchSize: batchSize)
        server.setRoute("/feed", feedRoute(Self.feed(Self.item("dup", "One", "one") + Self.item("x", "X", "x"))))
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        let one = try #require(try fixture.library.episodes(of: podcast.id).first { $0.title == "One" })
        try fixture.database.run("UPDATE episodes SET position = 12, played = 1 WHERE id = ?", one.id)

        server.setRoute("/feed", feedRoute(Self.feed(Self.item("dup", "Two", "two") + Self.item("x", "X", "x"), next: "/feed2")))
        server.setRoute("/feed2", feedRoute(Self.feed(Self.item("y", "Y", "y") + Self.item("dup", "One", "one"))))
        let summary = try await fixture.library.refresh(podcast.id)
        #expect(summary.added == 2 && summary.updated == 0 && summary.pages == 2)
        let episodes = try fixture.library.episodes(of: podcast.id)
        #expect(episodes.compactMap(\.title).sorted() == ["One", "Two", "X", "Y"])
        let kept = try #require(episodes.first { $0.id == one.id })
        #expect(kept.title == "One" && kept.position == 12 && kept.played && kept.identity == "dup")
        #expect(episodes.first { $0.title == "Two" }?.identity == "guid:dup|enclosure:https://cdn.example.com/two.mp3")
        #expect(try fixture.database.scalarInt("SELECT count(*) FROM episodes WHERE identity LIKE ' %'") == 0, "no placeholder left")
        let next = try await fixture.library.refresh(podcast.id)
        #expect(next.added == 0 && next.updated == 0)
        await fixture.manager.shutdown()
    }

    /// A later page that cannot be parsed when it is stored is undone alone (its savepoint): the
    /// earlier pages' episodes stay, the counts are the earlier pages', and the error is recorded.
    @Test func aLaterPageThatFailsIsUndoneAlone() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try Self.library(batchSize: 1)
        server.setRoute("/feed", feedRoute(Self.feed(Self.item("a", "A", "a"))))
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        func document(_ text: String, _ path: String) -> FeedFetcher.Document {
            FeedFetcher.Document(data: Data(text.utf8), finalURL: server.url(path), movedPermanently: false, etag: nil, lastModified: nil, mediaType: nil)
        }
        // Pages as a walk would have found them, the second broken after two items.
        let first = document(Self.feed(Self.item("a", "A", "a") + Self.item("b", "B", "b"), next: "/feed2"), "/feed")
        let broken = document(Self.feed(Self.item("c", "C", "c") + Self.item("d", "D", "d")) + "<item><title>cut", "/feed2")
        var loaded = FeedFetcher.Loaded(first: first)
        try loaded.append(broken, name: "page 2")
        loaded.walked = true
        let summary = try fixture.library.apply(loaded, to: podcast)
        #expect(summary.added == 1 && summary.pages == 1)
        #expect(summary.pageError?.code == .malformed)
        #expect(try fixture.library.episodes(of: podcast.id).compactMap(\.title).sorted() == ["A", "B"])
        #expect(try fixture.library.podcast(withID: podcast.id)?.lastError == summary.pageError?.message)

        // A first page that names a next page nobody fetched is not stored: the caller walks first.
        let unwalked = FeedFetcher.Loaded(first: first)
        #expect(throws: NeedsWalk.self) { try fixture.library.apply(unwalked, to: podcast) }
        await fixture.manager.shutdown()
    }

    /// The scan that spares a feed of one page a second parse: it misses no `rel="next"`.
    @Test func theNextPageScanIsConservative() {
        func may(_ text: String) -> Bool { FeedFetcher.mayNameNextPage(Data(text.utf8)) }
        #expect(!may(Self.feed(Self.item("a", "A", "a"))))
        #expect(!may("<rss><channel><atom:link rel=\"self\" href=\"x\"/><description>&lt;a rel=&quot;next&quot;&gt;</description></channel></rss>"))
        #expect(may("<feed><link rel=\"next\" href=\"/2\"/></feed>"))
        #expect(may("<feed><link rel = 'NEXT' href=\"/2\"/></feed>"))
        #expect(may("<feed><link href=\"/2\" rel=\" next \"/></feed>"))
        #expect(may("<feed><link rel=\"&#110;ext\" href=\"/2\"/></feed>"))
        #expect(may("<feed><link rel=\"next\""))
        let utf16 = Data([0xFF, 0xFE] + Array("<feed/>".utf8).flatMap { [$0, 0] })
        #expect(FeedFetcher.mayNameNextPage(utf16))
    }
}
