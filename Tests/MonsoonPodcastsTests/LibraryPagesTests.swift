import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// A paged feed costs the memory of one page, whatever the number of pages, and its pages together
/// are capped (issue 44: 100 pages of 45 MiB of comments each, 46 KB gzipped, took 4.7 GB).
@Suite struct LibraryPagesTests {
    /// Five pages of two items, served at `/feed1` … `/feed5`; returns their texts.
    static func servePages(_ server: TestServer) -> [String] {
        let pages = (1...5).map { pagedRSS($0, items: 2, next: $0 < 5 ? "/feed\($0 + 1)" : nil) }
        for (index, text) in pages.enumerated() { server.setRoute("/feed\(index + 1)", feedRoute(text)) }
        return pages
    }

    /// The walk hands each later page to a file on disk as it reads it: what a loaded feed holds of a
    /// later page is where its document is, never the document, which is read back one page at a time,
    /// byte for byte, to be stored (subscribing) or listed (an archive's dry run).
    @Test func laterPagesWaitOnDiskNotInMemory() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let pages = Self.servePages(server)
        let fetcher = fixture.library.fetcher
        let loaded = try #require(try await fetcher.load(server.url("/feed1"), followPages: true))
        #expect(loaded.pages == 5 && loaded.pageError == nil)
        #expect(loaded.later.map(\.finalURL) == (2...5).map { server.url("/feed\($0)") })
        #expect(!loaded.later.contains { Mirror(reflecting: $0).children.contains { $0.value is Data } }, "no later page's bytes in memory")
        for (offset, page) in loaded.later.enumerated() {
            #expect(try loaded.document(of: page, number: offset + 2).data == Data(pages[offset + 1].utf8))
        }

        let preview = try await fixture.library.preview(server.url("/feed1"))
        #expect(preview.feed.episodes.count == 10)
        guard case .subscribed(let podcast, let summary) = try await fixture.library.subscribe(to: server.url("/feed1")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(summary.pages == 5 && summary.added == 10 && summary.pageError == nil)
        #expect(try fixture.library.episodes(of: podcast.id).count == 10)
        await fixture.manager.shutdown()
    }

    /// The pages together stop at ``FeedLimits/maxTotalBytes``: the page that would go past it is cut
    /// off as it comes and is the page error, the pages before it are stored, and no later page is
    /// fetched.
    @Test func aPagedFeedStopsAtTheLimitOnAllItsPages() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let pages = Self.servePages(server)
        var limits = FeedLimits()
        limits.maxTotalBytes = pages[0].utf8.count + pages[1].utf8.count + pages[2].utf8.count / 2
        let manager = DownloadManager(configuration: EngineConfiguration())
        let library = try PodcastLibrary(database: try Database(path: ":memory:"), manager: manager, limits: limits)
        guard case .subscribed(let podcast, let summary) = try await library.subscribe(to: server.url("/feed1")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(summary.pages == 2 && summary.added == 4)
        let error = try #require(summary.pageError)
        #expect(error.code == .tooLarge)
        #expect(error.message == "page 3 of the feed (\(server.url("/feed3").absoluteString)) would take the feed's pages past "
                + "\(ByteCount.format(limits.maxTotalBytes)) in all; refused")
        #expect(server.requests(for: "/feed4").isEmpty && server.requests(for: "/feed5").isEmpty)
        #expect(try library.episodes(of: podcast.id).count == 4)
        #expect(try library.podcast(withID: podcast.id)?.lastError == error.message)
        await manager.shutdown()
    }
}
