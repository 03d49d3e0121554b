import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// Feeds that move: a private feed keeps its credentials when it moves on its host.
@Suite struct LibraryMoveTests {
    /// A private feed (user and password in its URL) answers 301 to another path of its host: the
    /// subscription is stored at the new URL with the credentials, libcurl sent them on the redirect,
    /// and later refreshes send them too. A query token is not carried to a URL that lacks it.
    ///
    /// With an absolute `Location` (what most servers send), the URL libcurl ends at has no
    /// credentials: before, the subscription was stored without them and every refresh was refused.
    /// (A relative one is resolved against the URL with its credentials.)
    @Test(arguments: [true, false])
    func aPermanentRedirectOnTheSameHostKeepsTheCredentials(absolute: Bool) async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let port = server.port
        func location(_ path: String) -> String { absolute ? "http://127.0.0.1:\(port)\(path)" : path }
        server.setRoute("/feed", Route(body: .bytes([]), faults: [.redirect(to: location("/new"), status: 301)]))
        server.setRoute("/new", feedRoute(rss(items: [("a", "One", "https://cdn.example.com/1.mp3")])))
        let basic = "Basic " + Data("alice:s3cret".utf8).base64EncodedString()
        let url = try #require(URL(string: "http://alice:s3cret@127.0.0.1:\(port)/feed?token=abc"))
        guard case .subscribed(let podcast, let summary) = try await fixture.library.subscribe(to: url) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(podcast.feedURL.absoluteString == "http://alice:s3cret@127.0.0.1:\(port)/new")
        #expect(summary.movedTo == podcast.feedURL)
        #expect(server.requests(for: "/feed").first?.header("Authorization") == basic)
        #expect(server.requests(for: "/new").first?.header("Authorization") == basic, "libcurl sends them on to the same host")

        server.resetStatistics()
        let refreshed = try await fixture.library.refresh(podcast.id)
        #expect(refreshed.added == 0 && !refreshed.unchanged)
        #expect(server.requests(for: "/new").first?.header("Authorization") == basic, "a refresh of the moved feed sends them")

        // A move found on a refresh keeps them as well.
        server.setRoute("/new", Route(body: .bytes([]), faults: [.redirect(to: location("/newer"), status: 308)]))
        server.setRoute("/newer", feedRoute(rss(items: [("a", "One", "https://cdn.example.com/1.mp3")])))
        let moved = try await fixture.library.refresh(podcast.id)
        #expect(moved.movedTo?.absoluteString == "http://alice:s3cret@127.0.0.1:\(port)/newer")
        #expect(try fixture.library.podcast(withID: podcast.id)?.feedURL == moved.movedTo)
        await fixture.manager.shutdown()
    }

    /// Credentials never go to another host: a redirect there is stored as it is.
    @Test func aPermanentRedirectToAnotherHostDropsTheCredentials() async throws {
        let server = try TestServer()
        let other = try TestServer()
        defer { server.stop(); other.stop() }
        let fixture = try LibraryFixture()
        // "localhost" and 127.0.0.1 are different hosts to a URL.
        let target = "http://localhost:\(other.port)/feed"
        server.setRoute("/feed", Route(body: .bytes([]), faults: [.redirect(to: target, status: 301)]))
        other.setRoute("/feed", feedRoute(rss(items: [("a", "One", "https://cdn.example.com/1.mp3")])))
        let url = try #require(URL(string: "http://alice:s3cret@127.0.0.1:\(server.port)/feed"))
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: url) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(podcast.feedURL.absoluteString == target)
        #expect(other.requests(for: "/feed").first?.header("Authorization") == nil)
        await fixture.manager.shutdown()
    }
}
