import Foundation
import MonsoonPodcasts
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// `monsoon archive` keeping every version of a republished episode, against the test server.
@Suite struct EpisodeVersionCommandTests {
    /// A feed of two episodes: g1 at `episode1` (its path, size and seed given), g2 at `episode2`.
    static func serve(_ server: TestServer, episode1: (path: String, size: Int, seed: UInt64) = ("/ep1.mp3", 20_001, 1),
                      episode2: String = "/ep2.mp3", length2: Int = 20_002) -> (Body, Body) {
        let body1 = Body.pattern(size: episode1.size, seed: episode1.seed)
        let body2 = Body.pattern(size: 20_002, seed: 2)
        server.setRoute(episode1.path, Route(body: body1, contentType: "audio/mpeg", etag: "\"e1-\(episode1.seed)\""))
        server.setRoute(episode2, Route(body: body2, contentType: "audio/mpeg", etag: "\"e2\""))
        let feed = """
            <?xml version="1.0"?><rss version="2.0"><channel><title>Versions Show</title>
            <item><title>Talk 2</title><guid>g2</guid><pubDate>02 Feb 2024 10:00:00 GMT</pubDate>
            <enclosure url="\(server.url(episode2).absoluteString)" type="audio/mpeg" length="\(length2)"/></item>
            <item><title>Talk 1</title><guid>g1</guid><pubDate>01 Feb 2024 10:00:00 GMT</pubDate>
            <enclosure url="\(server.url(episode1.path).absoluteString)" type="audio/mpeg" length="\(episode1.size)"/></item>
            </channel></rss>
            """
        server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
        return (body1, body2)
    }

    static func today() -> String {
        let day = UTCDate.day(Date())
        return "\(day.year)-\(day.month)-\(day.day)"
    }

    static func manifestEpisodes(_ path: String) throws -> [[String: Any]] {
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        return try #require(manifest["files"] as? [[String: Any]]).filter { $0["kind"] as? String == "episode" }
    }

    static func versions(_ folder: Folder, guid: String) async throws -> [[String: Any]] {
        let listing = await runMonsoon(["episodes", "Versions", "--json"], in: folder.path)
        let episodes = try #require(try JSONSerialization.jsonObject(with: Data(listing.output.utf8)) as? [[String: Any]])
        return try #require(episodes.first { $0["guid"] as? String == guid }?["versions"] as? [[String: Any]])
    }

    /// A test server serving ``serve(_:episode1:episode2:length2:)``'s feed, a folder, and that feed
    /// archived once into A: `body` gets them, the feed's URL and the first version of Talk 1.
    static func withArchive(_ body: (TestServer, Folder, String, Body) async throws -> Void) async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let (first, _) = serve(server)
        let feed = server.url("/feed.xml").absoluteString
        let run = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        try await body(server, folder, feed, first)
    }

    @Test func aRepublishedEpisodeKeepsEveryVersion() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let (first, _) = Self.serve(server)
        let feed = server.url("/feed.xml").absoluteString
        let show = folder.file("A/Versions Show")
        let run1 = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
        #expect(run1.status == 0, "\(run1.errors)")

        // An unchanged rerun asks for the feed alone: no check, no download.
        var seen = server.requests.count
        let rerun = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
        #expect(rerun.status == 0 && server.requests.dropFirst(seen).map(\.path) == ["/feed.xml"], "\(rerun.errors)")

        // Republished: the same guid, another URL, another length, other bytes.
        let (second, _) = Self.serve(server, episode1: ("/ep1-v2.mp3", 25_000, 11))
        let today = Self.today()
        seen = server.requests.count
        let run2 = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
        #expect(run2.status == 0, "\(run2.errors)")
        #expect(run2.errors.contains("Talk 1: a new version (the server's file is 25000 bytes, the archived one 20001); the earlier file is kept"), "\(run2.errors)")
        #expect(server.requests.dropFirst(seen).map { "\($0.method) \($0.path)" } == ["GET /feed.xml", "HEAD /ep1-v2.mp3", "GET /ep1-v2.mp3"])
        let newName = "2024-02-01 - Talk 1 (\(today)).mp3"
        #expect(folder.contents("A/Versions Show") == ["2024-02-01 - Talk 1 (\(today)).mp3", "2024-02-01 - Talk 1.mp3", "2024-02-02 - Talk 2.mp3",
                                                      "feed.xml", "monsoon-manifest.json"])
        #expect(try SHA256.hex(fileAt: show + "/2024-02-01 - Talk 1.mp3") == first.sha256Hex())
        #expect(try SHA256.hex(fileAt: show + "/" + newName) == second.sha256Hex())

        // The manifest lists both, each with its URL, validators, SHA-256 and day.
        let entries = try Self.manifestEpisodes(show + "/monsoon-manifest.json").filter { $0["guid"] as? String == "g1" }
        #expect(entries.count == 2)
        let old = try #require(entries.first { $0["file"] as? String == "2024-02-01 - Talk 1.mp3" })
        let new = try #require(entries.first { $0["file"] as? String == newName })
        #expect(old["version"] == nil && old["sha256"] as? String == first.sha256Hex() && old["etag"] as? String == "\"e1-1\"")
        #expect(old["sourceURL"] as? String == server.url("/ep1.mp3").absoluteString && old["seen"] as? String != nil)
        #expect(new["version"] as? String == today && new["sha256"] as? String == second.sha256Hex() && new["etag"] as? String == "\"e1-11\"")
        #expect(new["sourceURL"] as? String == server.url("/ep1-v2.mp3").absoluteString && (new["seen"] as? String)?.hasPrefix(today) == true)
        let verify = await runMonsoon(["verify", "A"], in: folder.path)
        #expect(verify.status == 0, "\(verify.output)\(verify.errors)")

        // The listing shows both versions.
        var versions = try await Self.versions(folder, guid: "g1")
        #expect(versions.map { $0["status"] as? String } == ["kept", "current"])
        #expect(versions.map { $0["sha256"] as? String } == [first.sha256Hex(), second.sha256Hex()])
        #expect(versions.map { $0["etag"] as? String } == ["\"e1-1\"", "\"e1-11\""] && versions[1]["version"] as? String == today)
        #expect(versions.map { ($0["file"] as? String).map { ($0 as NSString).lastPathComponent } } == ["2024-02-01 - Talk 1.mp3", newName])
        #expect(versions.allSatisfy { $0["seen"] as? String != nil && $0["url"] as? String != nil })
        #expect(try await Self.versions(folder, guid: "g2").map { $0["status"] as? String } == ["current"])
        let plain = await runMonsoon(["episodes", "Versions"], in: folder.path)
        #expect(plain.output.contains("Talk 1 [2 versions]") && !plain.output.contains("Talk 2 ["), "\(plain.output)")

        // Nothing new: nothing asked, nothing downloaded.
        seen = server.requests.count
        let run3 = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
        #expect(run3.status == 0 && server.requests.dropFirst(seen).map(\.path) == ["/feed.xml"], "\(run3.errors)")

        // Republished again the same day: a third name, then --versions latest keeps only it.
        let (third, _) = Self.serve(server, episode1: ("/ep1-v3.mp3", 26_000, 12))
        let run4 = await runMonsoon(["archive", feed, "-o", "A", "--versions", "latest"], in: folder.path)
        #expect(run4.status == 0, "\(run4.errors)")
        let latestName = "2024-02-01 - Talk 1 (\(today)-2).mp3"
        #expect(folder.contents("A/Versions Show") == [latestName, "2024-02-02 - Talk 2.mp3", "feed.xml", "monsoon-manifest.json"])
        #expect(try SHA256.hex(fileAt: show + "/" + latestName) == third.sha256Hex())
        #expect(try Self.manifestEpisodes(show + "/monsoon-manifest.json").filter { $0["guid"] as? String == "g1" }.map { $0["file"] as? String } == [latestName])
        versions = try await Self.versions(folder, guid: "g1")
        #expect(versions.map { $0["status"] as? String } == ["replaced", "replaced", "current"])
        #expect(versions.map { $0["version"] as? String } == [nil, today, today + "-2"])
        let verifyLatest = await runMonsoon(["verify", "A"], in: folder.path)
        #expect(verifyLatest.status == 0, "\(verifyLatest.output)\(verifyLatest.errors)")
    }

    @Test func latestKeepsTheEarlierFileWhenTheNewOneFails() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let (first, _) = Self.serve(server)
        let feed = server.url("/feed.xml").absoluteString
        #expect(await runMonsoon(["archive", feed, "-o", "A", "--versions", "latest"], in: folder.path).status == 0)
        // The new version is found, then its download fails (larger than --max-size allows).
        _ = Self.serve(server, episode1: ("/ep1-v2.mp3", 25_000, 11))
        let run = await runMonsoon(["archive", feed, "-o", "A", "--versions", "latest", "--max-size", "21000"], in: folder.path)
        #expect(run.status == 1, "\(run.errors)")
        #expect(try SHA256.hex(fileAt: folder.file("A/Versions Show/2024-02-01 - Talk 1.mp3")) == first.sha256Hex())
        #expect(try await Self.versions(folder, guid: "g1").map { $0["status"] as? String } == ["kept", "pending"])
    }

    @Test func anEnclosureThatOnlyMovedIsNoNewVersion() async throws {
        try await Self.withArchive { (server, folder, feed, first) async throws in

            // g1 moves to another name with the same bytes and validators (asked once with HEAD), g2 behind a
            // tracking prefix with the same length (not asked at all).
            _ = Self.serve(server, episode1: ("/mirror/episode-one.mp3", 20_001, 1), episode2: "/track/ep2.mp3")
            var seen = server.requests.count
            let run = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
            #expect(run.status == 0 && !run.errors.contains("new version"), "\(run.errors)")
            #expect(server.requests.dropFirst(seen).map { "\($0.method) \($0.path)" } == ["GET /feed.xml", "HEAD /mirror/episode-one.mp3"])
            #expect(folder.contents("A/Versions Show") == ["2024-02-01 - Talk 1.mp3", "2024-02-02 - Talk 2.mp3", "feed.xml", "monsoon-manifest.json"])
            #expect(try SHA256.hex(fileAt: folder.file("A/Versions Show/2024-02-01 - Talk 1.mp3")) == first.sha256Hex())
            #expect(try await Self.versions(folder, guid: "g1").map { $0["status"] as? String } == ["current"])
            // Recorded: the next run asks nothing.
            seen = server.requests.count
            #expect(await runMonsoon(["archive", feed, "-o", "A"], in: folder.path).status == 0)
            #expect(server.requests.dropFirst(seen).map(\.path) == ["/feed.xml"])

            // Moved again, to a server that refuses HEAD: its first byte is asked for instead.
            _ = Self.serve(server, episode1: ("/cdn2/first.mp3", 20_001, 1), episode2: "/track/ep2.mp3")
            var refusing = Route(body: .pattern(size: 20_001, seed: 1), contentType: "audio/mpeg", etag: "\"e1-1\"")
            refusing.faults = [.status(405, times: 1)]
            server.setRoute("/cdn2/first.mp3", refusing)
            seen = server.requests.count
            let moved = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
            #expect(moved.status == 0 && !moved.errors.contains("new version"), "\(moved.errors)")
            let asked = Array(server.requests.dropFirst(seen))
            #expect(asked.map { "\($0.method) \($0.path)" } == ["GET /feed.xml", "HEAD /cdn2/first.mp3", "GET /cdn2/first.mp3"])
            #expect(asked.last?.header("Range") == "bytes=0-0")
            #expect(try await Self.versions(folder, guid: "g1").map { $0["status"] as? String } == ["current"])
        }
    }

    @Test func anEnclosureTheServerCannotTellAboutIsAskedAgain() async throws {
        try await Self.withArchive { (server, folder, feed, _) async throws in
            // g2's new enclosure is not there (yet): nothing is decided, the earlier file stays the episode's.
            _ = Self.serve(server, episode2: "/moved/ep2-new.mp3", length2: 30_000)
            server.removeRoute("/moved/ep2-new.mp3")
            // Then a success that is a web page where the file should be (a "soft 404"): no answer either.
            for answer in ["the server answered 404", "the server answered 404", "the server answered 200 with a web page, not the episode's file"] {
                if answer.contains("web page") { server.setRoute("/moved/ep2-new.mp3", Route.html(status: 200, "<html><body>Not found</body></html>")) }
                let seen = server.requests.count
                let run = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.errors.contains("monsoon: Versions Show: Talk 2: cannot check whether its new enclosure is a new version (\(answer)"), "\(run.errors)")
                #expect(server.requests.dropFirst(seen).map { "\($0.method) \($0.path)" } == ["GET /feed.xml", "HEAD /moved/ep2-new.mp3"])
            }
            #expect(try await Self.versions(folder, guid: "g2").map { $0["status"] as? String } == ["current"])
        }
    }

    @Test func aTemplateWithVersionPlacesIt() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = Self.serve(server)
        let feed = server.url("/feed.xml").absoluteString
        let template = "{podcast}/{date}{version} {title}.{ext}"
        #expect(await runMonsoon(["archive", feed, "-o", "A", "--template", template], in: folder.path).status == 0)
        let (second, _) = Self.serve(server, episode1: ("/ep1-v2.mp3", 25_000, 11))
        let run = await runMonsoon(["archive", feed, "-o", "A", "--template", template], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        let name = "2024-02-01 (\(Self.today())) Talk 1.mp3"
        #expect(folder.contents("A/Versions Show") == [name, "2024-02-01 Talk 1.mp3", "2024-02-02 Talk 2.mp3", "feed.xml", "monsoon-manifest.json"])
        #expect(try SHA256.hex(fileAt: folder.file("A/Versions Show/" + name)) == second.sha256Hex())
    }

    @Test func aVersionLostByHandIsReportedAndRepairedFromItsOwnEnclosure() async throws {
        try await Self.withArchive { (server, folder, feed, first) async throws in
            let (second, _) = Self.serve(server, episode1: ("/ep1-v2.mp3", 25_000, 11))
            #expect(await runMonsoon(["archive", feed, "-o", "A", "--versions", "all"], in: folder.path).status == 0)
            let show = folder.file("A/Versions Show")
            let earlier = show + "/2024-02-01 - Talk 1.mp3"
            let newest = show + "/2024-02-01 - Talk 1 (\(Self.today())).mp3"

            // One lost by hand, then the other: a rerun keeps each in the manifest (all versions share a
            // guid, and the other one is still listed), so verify says it is missing.
            for (lost, path) in [(1, earlier), (2, newest)] {
                try FileManager.default.removeItem(atPath: path)
                let rerun = await runMonsoon(["archive", feed, "-o", "A", "--versions", "all"], in: folder.path)
                #expect(rerun.status == 0, "\(rerun.errors)")
                #expect(try Self.manifestEpisodes(show + "/monsoon-manifest.json").filter { $0["guid"] as? String == "g1" }.count == 2)
                let verify = await runMonsoon(["verify", "A"], in: folder.path)
                #expect(verify.status == 1 && verify.output.contains("missing \(earlier)\n") && verify.output.contains("missing \(newest)\n") == (lost == 2),
                        "\(verify.output)\(verify.errors)")
            }

            // Repaired, each version from its own enclosure.
            let repaired = await runMonsoon(["verify", "A", "--repair"], in: folder.path)
            #expect(repaired.status == 0, "\(repaired.output)\(repaired.errors)")
            #expect(try SHA256.hex(fileAt: earlier) == first.sha256Hex() && SHA256.hex(fileAt: newest) == second.sha256Hex())
        }
    }

    @Test func latestLeavesAFileThatIsNoLongerTheEarlierVersion() async throws {
        try await Self.withArchive { (server, folder, feed, _) async throws in
            _ = Self.serve(server, episode1: ("/ep1-v2.mp3", 25_000, 11))
            #expect(await runMonsoon(["archive", feed, "-o", "A"], in: folder.path).status == 0)
            // Something else now stands where the earlier version was.
            let earlier = folder.file("A/Versions Show/2024-02-01 - Talk 1.mp3")
            try Data("my own notes".utf8).write(to: URL(fileURLWithPath: earlier))
            let run = await runMonsoon(["archive", feed, "-o", "A", "--versions", "latest"], in: folder.path)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.errors.contains("monsoon: Versions Show: \(earlier) is 12 bytes, not the 20001 of the earlier version downloaded there"), "\(run.errors)")
            #expect(try String(contentsOfFile: earlier, encoding: .utf8) == "my own notes")
            #expect(try await Self.versions(folder, guid: "g1").map { $0["status"] as? String } == ["kept", "current"])
        }
    }

    @Test func filtersChooseWhichEpisodesAreLookedAtForNewVersions() async throws {
        try await Self.withArchive { (server, folder, feed, _) async throws in
            // Both republished.
            let (v2, _) = Self.serve(server, episode1: ("/ep1-v2.mp3", 25_000, 11), episode2: "/ep2-v2.mp3", length2: 30_000)
            server.setRoute("/ep2-v2.mp3", Route(body: .pattern(size: 30_000, seed: 22), contentType: "audio/mpeg", etag: "\"e2-22\""))

            // --match leaves Talk 2 out: it is not even asked about, and stays as it was.
            var seen = server.requests.count
            let matched = await runMonsoon(["archive", feed, "-o", "A", "--match", "Talk 1", "--limit", "5"], in: folder.path)
            #expect(matched.status == 0, "\(matched.errors)")
            #expect(server.requests.dropFirst(seen).map { "\($0.method) \($0.path)" } == ["GET /feed.xml", "HEAD /ep1-v2.mp3", "GET /ep1-v2.mp3"])
            #expect(try await Self.versions(folder, guid: "g1").map { $0["status"] as? String } == ["kept", "current"])
            #expect(try await Self.versions(folder, guid: "g2").map { $0["status"] as? String } == ["current"])
            #expect(try SHA256.hex(fileAt: folder.file("A/Versions Show/2024-02-01 - Talk 1 (\(Self.today())).mp3")) == v2.sha256Hex())

            // Talk 1 republished again. A new version counts as a download toward --limit: with one, only the
            // oldest episode's is started; the other is left as it is, for a later run.
            _ = Self.serve(server, episode1: ("/ep1-v3.mp3", 26_000, 12), episode2: "/ep2-v2.mp3", length2: 30_000)
            server.setRoute("/ep2-v2.mp3", Route(body: .pattern(size: 30_000, seed: 22), contentType: "audio/mpeg", etag: "\"e2-22\""))
            seen = server.requests.count
            let limited = await runMonsoon(["archive", feed, "-o", "A", "--limit", "1"], in: folder.path)
            #expect(limited.status == 0 && limited.errors.contains("monsoon: Versions Show: 1 more new version left for a later run (--limit)"), "\(limited.errors)")
            #expect(server.requests.dropFirst(seen).map { "\($0.method) \($0.path)" }.sorted()
                    == ["GET /ep1-v3.mp3", "GET /feed.xml", "HEAD /ep1-v3.mp3", "HEAD /ep2-v2.mp3"])
            #expect(try await Self.versions(folder, guid: "g1").map { $0["status"] as? String } == ["kept", "kept", "current"])
            #expect(try await Self.versions(folder, guid: "g2").map { $0["status"] as? String } == ["current"])

            // --since keeps Talk 2 alone: its new version is found and downloaded now.
            seen = server.requests.count
            let since = await runMonsoon(["archive", feed, "-o", "A", "--since", "2024-02-02"], in: folder.path)
            #expect(since.status == 0, "\(since.errors)")
            #expect(server.requests.dropFirst(seen).map { "\($0.method) \($0.path)" } == ["GET /feed.xml", "HEAD /ep2-v2.mp3", "GET /ep2-v2.mp3"])
            #expect(try await Self.versions(folder, guid: "g2").map { $0["status"] as? String } == ["kept", "current"])
        }
    }

    @Test func aSignatureThatChangesOnEveryFetchCostsNoRequest() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/ep1.mp3", Route(body: .pattern(size: 20_001, seed: 1), contentType: "audio/mpeg", etag: "\"e1\""))
        func serveFeed(signature: Int) {
            let feed = """
                <?xml version="1.0"?><rss version="2.0"><channel><title>Versions Show</title>
                <item><title>Talk 1</title><guid>g1</guid><pubDate>01 Feb 2024 10:00:00 GMT</pubDate>
                <enclosure url="\(server.url("/ep1.mp3?sig=\(signature)&amp;expires=\(1_000 + signature)").absoluteString)" type="audio/mpeg"/></item>
                </channel></rss>
                """
            server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
        }
        serveFeed(signature: 1)
        let feed = server.url("/feed.xml").absoluteString
        #expect(await runMonsoon(["archive", feed, "-o", "A"], in: folder.path).status == 0)
        for signature in 2...3 {
            serveFeed(signature: signature)
            let seen = server.requests.count
            let run = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
            #expect(run.status == 0 && server.requests.dropFirst(seen).map(\.path) == ["/feed.xml"], "\(run.errors)")
        }
        #expect(try await Self.versions(folder, guid: "g1").map { $0["status"] as? String } == ["current"])
    }

    @Test func theEnclosureRecordedIsTheOneTheFileCameFrom() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let (first, _) = Self.serve(server)
        var failing = Route(body: .pattern(size: 20_001, seed: 1), contentType: "audio/mpeg", etag: "\"e1-1\"")
        failing.faults = [.status(500, times: 1)]
        server.setRoute("/ep1.mp3", failing)
        let feed = server.url("/feed.xml").absoluteString
        #expect(await runMonsoon(["archive", feed, "-o", "A", "--retries", "0"], in: folder.path).status == 1)
        // The feed moves Talk 1 to another file while its download waits; the retry still fetches the one queued.
        let (second, _) = Self.serve(server, episode1: ("/ep1-v2.mp3", 25_000, 11))
        server.setRoute("/ep1.mp3", Route(body: .pattern(size: 20_001, seed: 1), contentType: "audio/mpeg", etag: "\"e1-1\""))
        let retried = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
        #expect(retried.status == 0, "\(retried.errors)")
        #expect(try SHA256.hex(fileAt: folder.file("A/Versions Show/2024-02-01 - Talk 1.mp3")) == first.sha256Hex())
        // So the next run compares the feed's enclosure with that one, and finds the new version.
        let run = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
        #expect(run.status == 0 && run.errors.contains("Talk 1: a new version"), "\(run.errors)")
        #expect(try SHA256.hex(fileAt: folder.file("A/Versions Show/2024-02-01 - Talk 1 (\(Self.today())).mp3")) == second.sha256Hex())
    }

    @Test func versionsWithDBIsAUsageError() async {
        let run = await runMonsoon(["archive", "--db", "postgresql://db.example.com/monsoon", "https://example.com/feed.xml", "--versions", "latest"], in: "/tmp")
        #expect(run.status == 2 && run.output == "", "\(run.errors)")
        #expect(run.errors.hasPrefix("monsoon: --versions cannot be used with --db"), "\(run.errors)")
    }
}
