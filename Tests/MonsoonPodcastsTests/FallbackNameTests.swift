import Foundation
import MonsoonEngine
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// Names for untitled episodes and feeds: nothing lists as blank or "(untitled)".
@Suite struct FallbackNameTests {
    @Test func anUntitledItemIsNamedAfterItsFile() throws {
        let feed = try parseXML(rss("""
            <item><guid>1</guid><enclosure url="https://cdn.example.org/shows/Episode%2012%20caf%C3%A9.mp3?token=abc" type="audio/mpeg"/></item>
            <item><guid>2</guid><itunes:title>From iTunes</itunes:title><enclosure url="https://cdn.example.org/2.mp3" type="audio/mpeg"/></item>
            <item><guid>3</guid><title>  </title><enclosure url="https://cdn.example.org/archive.tar.gz" type="audio/mpeg"/></item>
            <item><guid>4</guid><enclosure url="https://cdn.example.org/" type="audio/mpeg"/></item>
            """))
        #expect(feed.episodes.map(\.title) == ["Episode 12 café", "From iTunes", "archive.tar", nil])
        #expect(feed.episodes.map(\.identity) == ["1", "2", "3", "4"], "a made-up name never changes an identity")
    }

    @Test(arguments: [
        ("https://alice:s3cret@feeds.example.com:8443/show/rss/?token=abc#x", "feeds.example.com:8443/show/rss"),
        ("https://Feeds.Example.com/", "feeds.example.com"),
        ("http://example.com", "example.com"),
        ("https://example.com/a%20b/feed.xml", "example.com/a b/feed.xml"),
        ("file:///home/me/feeds/show.xml", "show.xml"),
    ])
    func anUntitledFeedIsNamedAfterItsURL(_ url: String, _ name: String) {
        #expect(FallbackName.podcast(feedURL: URL(string: url)!) == name)
    }

    /// A subscription to a feed without a title is listed under its URL's host and path, without the
    /// credentials the URL carries; a title that appears later replaces it.
    @Test func anUntitledPodcastGetsItsURLsName() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let untitled = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><item><guid>a</guid><title>A</title></item></channel></rss>"
        server.setRoute("/private/feed", feedRoute(untitled))
        var components = URLComponents(url: server.url("/private/feed"), resolvingAgainstBaseURL: false)!
        components.user = "alice"
        components.password = "s3cret"
        components.query = "token=abcdef"
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: components.url!) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(podcast.title == "127.0.0.1:\(server.port)/private/feed")
        #expect(podcast.name == podcast.title)
        server.setRoute("/private/feed", feedRoute(rss(title: "Now Titled", items: [])))
        _ = try await fixture.library.refresh(podcast.id)
        #expect(try fixture.library.podcast(withID: podcast.id)?.title == "Now Titled")
        await fixture.manager.shutdown()
    }
}
