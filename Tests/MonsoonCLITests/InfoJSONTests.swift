import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// `--write-info-json`: the sidecar beside each file, run in-process against the test server.
@Suite struct InfoJSONTests {
    /// A title no shell may see unquoted, with control characters a feed may carry.
    static let hostileTitle = "Talk $(touch pwned); `id` | x > y \u{1B}[31m & \"quoted\" \\ 'single'"
    static let showNotes = "Line one\nLine\ttwo <b>bold</b>"

    /// A feed of `count` episodes with every field a sidecar carries; the first's enclosure
    /// redirects (`/r1.mp3` to `/ep1.mp3`), and its title is `hostileTitle`. Returns the bodies.
    static func serve(_ server: TestServer, count: Int, title: (Int) -> String = { index in index == 1 ? hostileTitle : "Episode \(index)" }) -> [Body] {
        var items = ""
        var bodies: [Body] = []
        for index in 1...count {
            let body = Body.pattern(size: 10_000 + index, seed: UInt64(index))
            bodies.append(body)
            server.setRoute("/ep\(index).mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"e\(index)\"",
                                                     lastModified: Date(timeIntervalSince1970: 1_700_000_000)))
            let enclosure = index == 1 ? "/r1.mp3" : "/ep\(index).mp3"
            items += """
                <item><title>\(xml(title(index)))</title><guid isPermaLink="false">guid-\(index)</guid>
                <pubDate>0\(index) Feb 2024 10:00:00 GMT</pubDate><link>https://example.com/ep\(index)</link>
                <description>\(xml(showNotes))</description>
                <itunes:duration>01:02:0\(index)</itunes:duration><itunes:season>2</itunes:season><itunes:episode>\(index)</itunes:episode>
                <itunes:image href="https://example.com/ep\(index).jpg"/>
                <podcast:chapters url="https://example.com/ep\(index).json" type="application/json+chapters"/>
                <podcast:transcript url="https://example.com/ep\(index).vtt" type="text/vtt"/>
                <podcast:transcript url="https://example.com/ep\(index).srt" type="application/srt" language="en" rel="captions"/>
                <enclosure url="\(server.url(enclosure).absoluteString)" type="audio/mpeg" length="\(10_000 + index)"/></item>

                """
        }
        server.setRoute("/r1.mp3", Route(body: .bytes([]), faults: [.redirect(to: server.url("/ep1.mp3").absoluteString)]))
        let feed = """
            <?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
            <channel><title>Info Show</title><link>https://example.com/</link><itunes:author>Ann Author</itunes:author>
            <description>All about info</description><language>en-us</language><itunes:image href="https://example.com/cover.jpg"/>
            \(items)</channel></rss>
            """
        server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
        return bodies
    }

    static func xml(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    static func json(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    /// The episode file whose name starts with `prefix` in `folder`.
    static func file(_ folder: Folder, _ sub: String, startingWith prefix: String, endingWith suffix: String = ".mp3") throws -> String {
        let name = try #require(folder.contents(sub).first { $0.hasPrefix(prefix) && $0.hasSuffix(suffix) }, "\(prefix)…\(suffix) in \(folder.contents(sub))")
        return folder.file(sub + "/" + name)
    }

    @Test func aSidecarHoldsTheFeedsFieldsAndTheDownloads() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = Self.serve(server, count: 2)
        let feed = server.url("/feed.xml").absoluteString
        let run = await runMonsoon(["archive", feed, "-o", "A", "--write-info-json", "--json"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        let media = try Self.file(folder, "A/Info Show", startingWith: "2024-02-01")
        let sidecar = media + ".info.json"
        // Strings escape every control character: the only raw ones are the pretty-printing's newlines.
        let raw = try Data(contentsOf: URL(fileURLWithPath: sidecar))
        #expect(!raw.contains { $0 < 0x20 && $0 != 0x0A })
        #expect(String(decoding: raw, as: UTF8.self).contains("Line one\\nLine\\ttwo"))

        let info = try Self.json(sidecar)
        #expect(info["format"] as? String == "monsoon-info/1")
        let episode = try #require(info["episode"] as? [String: Any])
        // The library keeps no control character of a title (ESC is dropped); the rest as it is.
        #expect(episode["title"] as? String == Self.hostileTitle.replacingOccurrences(of: "\u{1B}", with: ""))
        #expect(episode["guid"] as? String == "guid-1" && episode["published"] as? String == "2024-02-01T10:00:00Z")
        #expect(episode["description"] as? String == Self.showNotes && episode["link"] as? String == "https://example.com/ep1")
        #expect(episode["duration"] as? Int == 3721 && episode["season"] as? Int == 2 && episode["episode"] as? Int == 1)
        #expect(episode["image"] as? String == "https://example.com/ep1.jpg" && episode["chaptersURL"] as? String == "https://example.com/ep1.json")
        #expect(episode["transcriptURL"] as? String == "https://example.com/ep1.vtt")
        let transcripts = try #require(episode["transcripts"] as? [[String: String]])
        #expect(transcripts == [["url": "https://example.com/ep1.vtt", "type": "text/vtt"],
                                ["url": "https://example.com/ep1.srt", "type": "application/srt", "language": "en", "rel": "captions"]])
        #expect(episode["enclosureURL"] as? String == server.url("/r1.mp3").absoluteString && episode["mediaType"] as? String == "audio/mpeg"
                && episode["declaredLength"] as? Int == 10_001 && episode["id"] as? Int != nil)
        let podcast = try #require(info["podcast"] as? [String: Any])
        #expect(podcast["title"] as? String == "Info Show" && podcast["feedURL"] as? String == feed && podcast["link"] as? String == "https://example.com/")
        #expect(podcast["author"] as? String == "Ann Author" && podcast["description"] as? String == "All about info")
        #expect(podcast["image"] as? String == "https://example.com/cover.jpg" && podcast["language"] as? String == "en-us")
        let download = try #require(info["download"] as? [String: Any])
        #expect(download["file"] as? String == (media as NSString).lastPathComponent)
        #expect(download["sourceURL"] as? String == server.url("/r1.mp3").absoluteString)
        #expect(download["finalURL"] as? String == server.url("/ep1.mp3").absoluteString)
        #expect(download["etag"] as? String == "\"e1\"" && download["lastModified"] as? String == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(download["bytes"] as? Int == 10_001 && download["sha256"] as? String == bodies[0].sha256Hex())
        #expect((download["downloaded"] as? String)?.hasSuffix("Z") == true)
        // `--json` says where each went; nothing temporary is left; the manifest lists the sidecars, so `verify` is clean.
        let events = run.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(Set(events.filter { $0["event"] as? String == "infoJSON" }.compactMap { $0["path"] as? String })
                == Set(folder.contents("A/Info Show").filter { $0.hasSuffix(".mp3") }.map { folder.file("A/Info Show/" + $0 + ".info.json") }))
        #expect(!folder.contents("A/Info Show").contains { $0.hasSuffix(".tmp") || $0.hasPrefix(".") }, "\(folder.contents("A/Info Show"))")
        let manifest = try Self.json(folder.file("A/Info Show/monsoon-manifest.json"))
        let entries = try #require(manifest["files"] as? [[String: Any]])
        #expect(entries.filter { $0["kind"] as? String == "info" }.count == 2)
        let verify = await runMonsoon(["verify", "A"], in: folder.path)
        #expect(verify.status == 0, "\(verify.output)\(verify.errors)")

        // A sidecar gone (or an archive made without them): the next run writes it, and fetches no media.
        try FileManager.default.removeItem(atPath: sidecar)
        let before = server.requests.count
        let again = await runMonsoon(["archive", feed, "-o", "A", "--write-info-json"], in: folder.path)
        #expect(again.status == 0, "\(again.errors)")
        #expect(server.requests.dropFirst(before).map(\.path) == ["/feed.xml"])
        #expect(try Self.json(sidecar)["download"] as? [String: Any] != nil)
        #expect((try Self.json(sidecar)["download"] as? [String: Any])?["sha256"] as? String == bodies[0].sha256Hex())
    }

    @Test func getWritesWhatAPlainURLHas() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 5_000, seed: 9)
        server.setRoute("/file.bin", Route(body: body, etag: "\"f\""))
        server.setRoute("/go", Route(body: .bytes([]), faults: [.redirect(to: server.url("/file.bin").absoluteString)]))
        let run = await runMonsoon(["get", "-o", "out", "--write-info-json", server.url("/go").absoluteString], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(folder.contents("out") == ["file.bin", "file.bin.info.json"])
        let info = try Self.json(folder.file("out/file.bin.info.json"))
        #expect(info["episode"] == nil && info["podcast"] == nil)
        let download = try #require(info["download"] as? [String: Any])
        #expect(download["sourceURL"] as? String == server.url("/go").absoluteString && download["finalURL"] as? String == server.url("/file.bin").absoluteString)
        #expect(download["sha256"] as? String == body.sha256Hex() && download["bytes"] as? Int == 5_000 && download["etag"] as? String == "\"f\"")

        // A sidecar is never written through a link: one planted at its name fails the file, and its target is untouched.
        try FileManager.default.removeItem(atPath: folder.file("out/file.bin.info.json"))
        try "mine".write(toFile: folder.file("target.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder.file("out/file.bin.info.json"), withDestinationPath: folder.file("target.txt"))
        let linked = await runMonsoon(["get", "-o", "out", "--write-info-json", server.url("/go").absoluteString], in: folder.path)
        #expect(linked.status == 1)
        #expect(linked.errors.contains("file.bin.info.json is a symbolic link, and Monsoon never writes through one"), "\(linked.errors)")
        #expect(try String(contentsOfFile: folder.file("target.txt"), encoding: .utf8) == "mine")
    }

    @Test func optionsThatCannotGoTogetherAreUsageErrors() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let discard = await runMonsoon(["get", "--discard", "--write-info-json", "http://127.0.0.1:1/x"], in: folder.path)
        #expect(discard.status == 2 && discard.errors.contains("--write-info-json and --exec have no meaning with --discard"))
        let noWait = await runMonsoon(["get", "--no-wait", "--exec", "true", "http://127.0.0.1:1/x"], in: folder.path)
        #expect(noWait.status == 2 && noWait.errors.contains("leave out --no-wait"))
        let quote = await runMonsoon(["get", "--exec", "echo 'open", "http://127.0.0.1:1/x"], in: folder.path)
        #expect(quote.status == 2 && quote.errors.contains("--exec: a ' is not closed"), "\(quote.errors)")
        let jobs = await runMonsoon(["download", "--exec-jobs", "0", "--exec", "true"], in: folder.path)
        #expect(jobs.status == 2 && jobs.errors.contains("--exec-jobs takes 1 to 1000 hooks at once, not 0"))
    }
}
