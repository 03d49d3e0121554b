import FoundationEssentials
import Dispatch
import MonsoonEngine
import MonsoonPodcasts
import MonsoonStore
import MonsoonTestServer

// Refreshing a library of 200 podcasts from a loopback server: every feed changed
// (a new episode each), then every feed unchanged (conditional requests, 304).

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func feed(_ show: Int, episodes: Int) -> String {
    var text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
        <title>Show \(show)</title><link>https://example.com/\(show)</link><itunes:author>Host \(show)</itunes:author>

        """
    for episode in (0..<episodes).reversed() {
        text += """
            <item><title>Show \(show), episode \(episode)</title><guid isPermaLink="false">show-\(show)-\(episode)</guid>
            <enclosure url="https://cdn.example.com/\(show)/\(episode).mp3" type="audio/mpeg" length="\(30_000_000 + episode)"/>
            <pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate><itunes:duration>45:\(String(cFormat: "%02d", episode % 60))</itunes:duration>
            <description><![CDATA[<p>Notes for episode \(episode) of show \(show), with <a href="https://example.com">links</a>.</p>]]></description></item>

            """
    }
    return text + "</channel></rss>\n"
}

/// Nonisolated, so the library (not Sendable) stays in this one task.
func run() async throws {
    let count = 200
    let perFeed = 100
    let server = try TestServer()
    for show in 0..<count {
        server.setRoute("/feeds/\(show).xml", Route(body: .bytes(Array(feed(show, episodes: perFeed).utf8)), contentType: "application/rss+xml", etag: "\"a\(show)\""))
    }
    let manager = DownloadManager()
    let library = try PodcastLibrary(database: try Database(path: ":memory:"), manager: manager)
    let subscribe = try await seconds {
        for show in 0..<count { _ = try await library.subscribe(to: server.url("/feeds/\(show).xml")) }
    }
    for show in 0..<count {
        server.setRoute("/feeds/\(show).xml", Route(body: .bytes(Array(feed(show, episodes: perFeed + 1).utf8)), contentType: "application/rss+xml", etag: "\"b\(show)\""))
    }
    var added = 0
    let changed = try await seconds {
        added = try await library.refreshAll().reduce(0) { $0 + ((try? $1.1.get().added) ?? 0) }
    }
    var unchanged = 0
    let notModified = try await seconds {
        unchanged = try await library.refreshAll().filter { (try? $0.1.get().unchanged) == true }.count
    }
    await manager.shutdown()
    server.stop()
    print("\(count) podcasts of \(perFeed) episodes on a loopback server")
    print(String(cFormat: "subscribe one by one:          %.3f s", subscribe))
    print(String(cFormat: "refresh all, every feed new:   %.3f s (%d episodes added)", changed, added))
    print(String(cFormat: "refresh all, nothing changed:  %.3f s (%d answered 304)", notModified, unchanged))
}

try await run()
