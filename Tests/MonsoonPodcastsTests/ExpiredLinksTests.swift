import Foundation
import Synchronization
@testable import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// What to do about episode downloads refused with 401, 403 or 410 (`ExpiredLinks`), and the
/// library's part in it: a refresh gives the same episode its new signed link.
@Suite struct ExpiredLinksTests {
    static let old = URL(string: "https://cdn.example.com/1.mp3?expires=100&sig=a")!
    static let new = URL(string: "https://cdn.example.com/1.mp3?expires=200&sig=b")!

    /// A download's failure, as its `.statusChanged` event tells it.
    struct Failure {
        var id: DownloadID
        var url: URL
        var status: DownloadStatus = .failed
        var error: DownloadError
        var owner: DownloadOwner
    }

    func failed(_ id: String, _ url: URL = old, status: Int? = 403, owner: DownloadOwner = .episode) -> Failure {
        Failure(id: DownloadID(id), url: url, error: DownloadError(.httpStatus, "the server answered \(status ?? 0) Forbidden", httpStatus: status), owner: owner)
    }

    /// The job `take` gives for `failure`, or a failed test.
    func taking(_ links: inout ExpiredLinks, _ failure: Failure) throws -> ExpiredLinks.Job {
        let job = links.take(take: failure)
        return try #require(job)
    }

    @Test func onlyRefusedEpisodeDownloadsAreTakenEachFailureOnce() throws {
        var links = ExpiredLinks()
        #expect(ExpiredLinks.isRefusal(401) && ExpiredLinks.isRefusal(403) && ExpiredLinks.isRefusal(410))
        #expect(!ExpiredLinks.isRefusal(404) && !ExpiredLinks.isRefusal(503) && !ExpiredLinks.isRefusal(nil))
        #expect(links.take(take: failed("d4", owner: .direct)) == nil, "a plain download is not an episode's")
        #expect(links.take(take: failed("e4", owner: .direct)) == nil, "its owner says whose it is, not its id's letter")
        #expect(links.take(take: failed("e4", status: 404)) == nil)
        #expect(links.take(take: failed("e4", status: nil)) == nil)
        var queued = failed("e4")
        queued.status = .queued
        #expect(links.take(take: queued) == nil)
        let job = try taking(&links, failed("e4"))
        #expect(job.episode == 4 && job.download == "e4" && job.url == Self.old && job.error.httpStatus == 403)
        #expect(links.hasSeen("e4", at: Self.old) && !links.hasSeen("e4", at: Self.new))
        #expect(links.take(take: failed("e4")) == nil, "the same failure told again (with a better reason) is reported")
        #expect(links.take(take: failed("e4", Self.new)) != nil, "a failure of its new link is another")
        links.close()
        #expect(links.take(take: failed("e5")) == nil, "closed: the run is ending")
    }

    @Test func aNewLinkIsFollowedAFeedIsReadOncePerEpisodeAndOneReadingServesThoseBeforeIt() throws {
        var links = ExpiredLinks()
        let first = try taking(&links, failed("e1"))
        let second = try taking(&links, failed("e2", URL(string: "https://cdn.example.com/2.mp3?sig=a")!))
        // The library still has the refused link: read the feed again.
        #expect(links.decide(first, podcast: 7, currentURL: Self.old) == .refresh(podcast: 7))
        links.refreshed(podcast: 7, changedEpisodes: true)
        #expect(links.decide(first, podcast: 7, currentURL: Self.new) == .changeURL(Self.new))
        links.finished(first, renewedTo: Self.new)
        // Taken before that reading ended: it serves this one too, whatever it gave.
        #expect(links.decide(second, podcast: 7, currentURL: URL(string: "https://cdn.example.com/2.mp3?sig=b")!)
                == .changeURL(URL(string: "https://cdn.example.com/2.mp3?sig=b")!))
        guard case .fail(let error) = links.decide(second, podcast: 7, currentURL: URL(string: "https://cdn.example.com/2.mp3?sig=a")!) else {
            Issue.record("a reading since its failure gave no new link: it fails"); return
        }
        #expect(error.message.hasPrefix("the server answered 403 Forbidden: the link has likely expired, and the feed, read again, gives no new one;"))
        #expect(error.message.hasSuffix("then run 'monsoon retry e2'") && error.httpStatus == 403 && error.code == .httpStatus)

        // Later, the link the reading gave expires too: the feed is read again for a failure taken since.
        let later = try taking(&links, failed("e3", URL(string: "https://cdn.example.com/3.mp3?sig=b")!))
        #expect(links.decide(later, podcast: 7, currentURL: URL(string: "https://cdn.example.com/3.mp3?sig=b")!) == .refresh(podcast: 7))
        links.refreshed(podcast: 7, changedEpisodes: true)
        // Its new link refused at once: not read again for it (once per episode).
        let again = try taking(&links, failed("e1", Self.new))
        guard case .fail(let refused) = links.decide(again, podcast: 7, currentURL: Self.new) else { Issue.record("read once per episode"); return }
        #expect(refused.message.hasPrefix("the server answered 403 Forbidden, also for the new link the feed gave when read again;"))
    }

    @Test func aFeedThatRenewsNothingIsNotReadAgainAndTheOtherEndsSayWhy() throws {
        var links = ExpiredLinks()
        let first = try taking(&links, failed("e1"))
        #expect(links.decide(first, podcast: 3, currentURL: Self.old) == .refresh(podcast: 3))
        links.refreshed(podcast: 3, changedEpisodes: false)
        #expect(links.decide(first, podcast: 3, currentURL: Self.old) != .refresh(podcast: 3))
        // Taken after that reading: the feed changed nothing then, so it is not read again.
        let other = try taking(&links, failed("e2", URL(string: "https://cdn.example.com/2.mp3")!))
        guard case .fail = links.decide(other, podcast: 3, currentURL: URL(string: "https://cdn.example.com/2.mp3")!) else {
            Issue.record("a feed that renews nothing is read once"); return
        }
        // The episode gone, the feed unreadable, a link that is not http(s).
        let gone = try taking(&links, failed("e8"))
        guard case .fail(let goneError) = links.decide(gone, podcast: nil, currentURL: nil) else { Issue.record("gone"); return }
        #expect(goneError.message.contains("no longer in the library"))
        let unread = try taking(&links, failed("e9"))
        #expect(links.decide(unread, podcast: 4, currentURL: Self.old) == .refresh(podcast: 4))
        guard case .fail(let unreadError) = links.decide(unread, podcast: 4, currentURL: Self.old, refreshFailure: "cannot connect") else { Issue.record("unread"); return }
        #expect(unreadError.message.contains("the feed could not be read again (cannot connect)"))
        let ftp = try taking(&links, failed("e10"))
        #expect(links.decide(ftp, podcast: 5, currentURL: URL(string: "ftp://cdn.example.com/1.mp3")!) == .refresh(podcast: 5))
    }

    /// The library's side: a refresh of a feed that signs its links gives the same episode (its
    /// identity, its row) the new link, and no new episode.
    @Test func aRefreshGivesTheSameEpisodeItsNewSignedLink() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let signing = URLSigning(lifetime: 60)
        let media = server.url("/1.mp3")
        let counter = Counter()
        server.setRoute("/feed", Route(body: .generated {
            // A second apart at least, each fetch's link is another.
            Array(rss(items: [("g1", "One", signing.sign(media, now: Date().addingTimeInterval(Double(counter.next()))).absoluteString)]).utf8)
        }, contentType: "application/rss+xml"))
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: server.url("/feed")) else { Issue.record("subscribed"); return }
        let before = try #require(try fixture.library.episodes(of: podcast.id).first)
        let summary = try await fixture.library.refresh(podcast.id)
        #expect(summary.added == 0 && summary.updated == 1)
        let after = try #require(try fixture.library.episodes(of: podcast.id).first)
        #expect(try fixture.library.episodes(of: podcast.id).count == 1)
        #expect(after.id == before.id && after.identity == before.identity && after.enclosureURL != before.enclosureURL)
        #expect(after.enclosureURL?.query?.contains("sig=") == true)
        await fixture.manager.shutdown()
    }
}

/// Counts calls, from any thread.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}

extension ExpiredLinks {
    mutating func take(take failure: ExpiredLinksTests.Failure) -> Job? {
        take(Download(request: DownloadRequest(id: failure.id, url: failure.url, destination: .file("/tmp/\(failure.id.rawValue)"), owner: failure.owner),
                      status: failure.status, bytes: 0, lastError: failure.error, attempts: 0))
    }
}
