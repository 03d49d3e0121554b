import Foundation
import MonsoonEngine
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// What a downloading command says as it goes: a start once per download however often it is
/// retried, a failure once, what a dry run would refuse, and the summary's bytes.
@Suite struct LiveViewTests {
    /// A feed of these items on `server` (a `file://` enclosure stays as given), newest last.
    static func feed(_ items: [(title: String, url: String, length: Int?)], title: String = "Wide Show") -> Route {
        var text = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>\(title)</title>\n"
        for (index, item) in items.enumerated() {
            let length = item.length.map { " length=\"\($0)\"" } ?? ""
            text += "<item><title>\(item.title)</title><guid>g\(index)</guid><pubDate>\(String(format: "%02d", index + 1)) Jan 2024 10:00:00 GMT</pubDate>"
                + "<enclosure url=\"\(item.url)\" type=\"audio/mpeg\"\(length)/></item>\n"
        }
        return Route(body: .bytes(Array((text + "</channel></rss>\n").utf8)), contentType: "application/rss+xml")
    }

    static func lines(_ text: String, _ prefix: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }

    /// A feed of one good episode and three `file://` ones (refused when they would start).
    static func localEnclosures(_ server: TestServer) -> String {
        server.setRoute("/ok.mp3", Route(body: .pattern(size: 2_000, seed: 1), contentType: "audio/mpeg"))
        var items: [(title: String, url: String, length: Int?)] = [("Fine", server.url("/ok.mp3").absoluteString, 2_000)]
        for index in 1...3 { items.append(("Local \(index)", "file:///etc/passwd\(index)", nil)) }
        server.setRoute("/feed.xml", Self.feed(items))
        return server.url("/feed.xml").absoluteString
    }

    @Test func aFailureBeforeTheStartIsSaidOnceInTextAndJSON() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let feed = Self.localEnclosures(server)
        let text = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
        #expect(text.status == 1)
        #expect(Self.lines(text.errors, "monsoon: e").sorted() == (2...4).map {
            "monsoon: e\($0) failed: file:///etc/passwd\($0 - 1): only http and https URLs can be downloaded; this one is file:"
        }, "\(text.errors)")
        #expect(Self.lines(text.output, "started ") == ["started e1 \(server.url("/ok.mp3").absoluteString)"])
        // Again, as JSON: the failed ones are asked for again, and fail once each.
        let json = await runMonsoon(["archive", feed, "-o", "A", "--json"], in: folder.path)
        #expect(json.status == 1)
        let events = json.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(events.count == json.output.split(separator: "\n").count, "every line is one JSON object")
        #expect(events.filter { $0["event"] as? String == "failed" }.compactMap { $0["id"] as? String }.sorted() == ["e2", "e3", "e4"])
        #expect(events.filter { $0["event"] as? String == "summary" }.first?["failed"] as? Int == 3)
        #expect(events.count == 4, "three failures and the summary: \(json.output)")
    }

    @Test func aDryRunShowsANonHTTPEnclosureAsRefused() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let feed = Self.localEnclosures(server)
        let plan = await runMonsoon(["archive", feed, "-o", "A", "--dry-run"], in: folder.path)
        #expect(plan.status == 0, "\(plan.errors)")
        let lines = plan.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("  2024-01-02  Local 1: refused: its enclosure file:///etc/passwd1 is not an http or https URL"), "\(plan.output)")
        #expect(lines.contains { $0.hasPrefix("Wide Show (") && $0.hasSuffix("1 to download, 0 already archived, 0 left out, 3 refused") })
        #expect(lines.contains("  127.0.0.1:\(server.port)  1 file  2.0 KiB"))
        #expect(!plan.output.contains("  ?  "), "no host '?' for a file:// enclosure")
        #expect(lines.contains { $0.hasPrefix("total: 1 file, 2.0 KiB; 3 refused (not http or https)") })
        let json = await runMonsoon(["archive", feed, "-o", "A", "--dry-run", "--json"], in: folder.path)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["files"] as? Int == 1 && object["refused"] as? Int == 3)
        #expect((object["hosts"] as? [String: Any])?.keys.sorted() == ["127.0.0.1:\(server.port)"])
        let episodes = try #require(((object["podcasts"] as? [[String: Any]])?.first?["episodes"]) as? [[String: Any]])
        #expect(episodes.filter { $0["refused"] is String }.count == 3 && episodes.filter { $0["refused"] is NSNull }.count == 1)
    }

    @Test func aRetriedDownloadIsStartedOnce() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // Each file fails twice before it comes: a 503 (no Retry-After: this download only), then a dropped connection.
        var items: [(title: String, url: String, length: Int?)] = []
        for index in 1...3 {
            server.setRoute("/e\(index).mp3", Route(body: .pattern(size: 20_000, seed: UInt64(index)), contentType: "audio/mpeg", etag: "\"v\(index)\"",
                                                    faults: [.status(503, times: 1), .dropAfter(bytes: 5_000, times: 1)]))
            items.append(("Show \(index)", server.url("/e\(index).mp3").absoluteString, 20_000))
        }
        server.setRoute("/feed.xml", Self.feed(items))
        let run = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A", "--json"], in: folder.path)
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        let events = run.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(events.filter { $0["event"] as? String == "retrying" }.count == 6, "two retries each: \(run.output)")
        #expect(events.filter { $0["event"] as? String == "started" }.compactMap { $0["id"] as? String }.sorted() == ["e1", "e2", "e3"])
        // The server saw the retries: three requests a file.
        #expect((1...3).allSatisfy { server.requests(for: "/e\($0).mp3").count == 3 })
        let summary = try #require(events.last)
        // 5,000 bytes came before each drop and were resumed from the part: transferred, not resumed from an earlier run.
        #expect(summary["bytes"] as? Int == 60_000 && summary["transferredBytes"] as? Int == 60_000 && summary["resumedBytes"] as? Int == 0, "\(summary)")
    }

    @Test func getSaysStartedOnceWithRetriesAndTheSummarySeparatesResumedBytes() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // The first run gets 30,000 bytes and loses the connection; the retry is refused for good: a part is left.
        server.setRoute("/big.mp3", Route(body: .pattern(size: 100_000, seed: 9), contentType: "audio/mpeg", etag: "\"b\"",
                                          faults: [.dropAfter(bytes: 30_000, times: 1), .status(404, times: 1)]))
        let url = server.url("/big.mp3").absoluteString
        let first = await runMonsoon(["get", url, "--verbose"], in: folder.path)
        #expect(first.status == 1, "\(first.errors)")
        #expect(Self.lines(first.errors, "monsoon: d1 started").count == 1)
        // The second: a 503 and another drop first, retried; started said once; 30,000 bytes come from the part.
        server.setRoute("/big.mp3", Route(body: .pattern(size: 100_000, seed: 9), contentType: "audio/mpeg", etag: "\"b\"",
                                          faults: [.status(503, times: 1), .dropAfter(bytes: 20_000, times: 1)]))
        let second = await runMonsoon(["get", url, "--verbose"], in: folder.path)
        #expect(second.status == 0, "\(second.errors)")
        #expect(Self.lines(second.errors, "monsoon: d1 started") == ["monsoon: d1 started: \(url)"], "\(second.errors)")
        #expect(Self.lines(second.errors, "monsoon: d1 retrying").count == 2)
        let requests = server.requests(for: "/big.mp3")
        #expect(requests.count == 5, "two in the first run, three in the second")
        let summary = try #require(Self.lines(second.errors, "monsoon: 1 of 1 downloaded").first)
        // 70,000 bytes came over the wire in this run (20,000 before the drop, then 50,000), 30,000 were in the part.
        #expect(summary.hasPrefix("monsoon: 1 of 1 downloaded (68 KiB transferred in "), "\(summary)")
        #expect(summary.hasSuffix(" s, 29 KiB resumed from parts)"), "\(summary)")
    }
}

extension LiveViewTests {
    /// Two podcasts, each with an "Episode 11: On curl": `--json` says which podcast and which
    /// episode (title and guid) each event is of; a plain `get` keeps its fields.
    @Test func jsonEventsSayWhichPodcastAndEpisode() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        for (index, show) in ["On Curl", "Net Talk"].enumerated() {
            server.setRoute("/\(index).mp3", Route(body: .pattern(size: 1_000, seed: UInt64(index)), contentType: "audio/mpeg"))
            server.setRoute("/feed\(index).xml", Self.feed([("Episode 11: On curl", server.url("/\(index).mp3").absoluteString, 1_000)], title: show))
            #expect(await runMonsoon(["add", server.url("/feed\(index).xml").absoluteString], in: folder.path).status == 0)
            #expect(await runMonsoon(["queue", "add", "--podcast", show, "--all"], in: folder.path).status == 0)
        }
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("Podcasts")], in: folder.path).status == 0)
        let run = await runMonsoon(["download", "--json"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        let events = run.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        for name in ["started", "finished"] {
            let said = events.filter { $0["event"] as? String == name }
            #expect(Set(said.compactMap { $0["podcast"] as? String }) == ["On Curl", "Net Talk"] && said.count == 2, "\(run.output)")
            #expect(said.allSatisfy { ($0["episode"] as? [String: String]) == ["title": "Episode 11: On curl", "guid": "g0"] }, "\(run.output)")
        }
        let get = await runMonsoon(["get", "--json", server.url("/0.mp3").absoluteString], in: folder.path)
        let finished = try #require(get.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .first { $0["event"] as? String == "finished" })
        #expect(Set(finished.keys) == ["event", "time", "id", "path", "bytes"], "\(finished)")
    }
}
