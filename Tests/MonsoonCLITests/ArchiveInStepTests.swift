import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// An archive stays in step with what is done to it: `delete`, `unsubscribe --delete-files` and
/// `sync` keep its manifests true, `verify --repair` fetches what went, and `archive` keeps the
/// newest N (`--latest`), every subscription (`--all`), and names other file systems take.
@Suite struct ArchiveInStepTests {
    /// `verify DIR`'s exit status and its last line on standard error.
    static func verify(_ directory: String, in folder: Folder) async -> (status: Int32, verdict: String) {
        let run = await runMonsoon(["verify", directory], in: folder.path)
        return (run.status, run.errors.split(separator: "\n").last.map(String.init) ?? run.output)
    }

    static func episodeFiles(_ manifest: [String: Any]) -> [String] {
        ((manifest["files"] as? [[String: Any]]) ?? []).filter { $0["kind"] as? String == "episode" }.compactMap { $0["file"] as? String }.sorted()
    }

    @Test func deleteAndUnsubscribeKeepTheManifestTrue() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = ArchiveCommandTests.serve(server, count: 3)
        let show = folder.file("A/Archive Show")
        let archived = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A", "--with-transcripts"], in: folder.path)
        #expect(archived.status == 0, "\(archived.errors)")
        #expect(await Self.verify("A", in: folder) == (0, "monsoon: verified 5 files in 1 folder: all as listed"))

        let deleted = await runMonsoon(["delete", "1"], in: folder.path)
        #expect(deleted.status == 0 && deleted.output.hasPrefix("deleted 1 episode download"), "\(deleted.output)\(deleted.errors)")
        #expect(folder.contents("A/Archive Show").filter { $0.hasSuffix(".mp3") }.count == 2)
        #expect(Self.episodeFiles(try ArchiveFolderTests.manifest(show)).count == 2)
        #expect(await Self.verify("A", in: folder) == (0, "monsoon: verified 4 files in 1 folder: all as listed"))
        // Deleted on purpose: skipped, not missing; and the next run's manifest does not list it again.
        let again = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A", "--with-transcripts"], in: folder.path)
        #expect(again.status == 0 && again.errors.contains("0 downloaded, 3 skipped (already archived), 0 failed\n") && !again.errors.contains("missing"),
                "\(again.errors)")
        #expect(await Self.verify("A", in: folder) == (0, "monsoon: verified 4 files in 1 folder: all as listed"))

        // What is left of the podcast's folder is the archive's own: the feed copy and a transcript, listed.
        let gone = await runMonsoon(["unsubscribe", "1", "--delete-files"], in: folder.path)
        #expect(gone.status == 0 && gone.output.contains("(2 files deleted"), "\(gone.output)\(gone.errors)")
        #expect(folder.contents("A/Archive Show") == ["2024-02-01 - Talk 1.transcript.vtt", "feed.xml", "monsoon-manifest.json"])
        #expect(ArchiveFolderTests.files(try ArchiveFolderTests.manifest(show)) == ["2024-02-01 - Talk 1.transcript.vtt", "feed.xml"])
        #expect(await Self.verify("A", in: folder) == (0, "monsoon: verified 2 files in 1 folder: all as listed"))
    }

    @Test func aFeedThatCannotBeReadIsCountedInTheSummary() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = ArchiveCommandTests.serve(server, count: 2)
        let urls = [server.url("/feed.xml").absoluteString, server.url("/gone.xml").absoluteString]
        let text = await runMonsoon(["archive"] + urls + ["-o", "A"], in: folder.path)
        #expect(text.status == 1)
        #expect(text.errors.contains("monsoon: archived: 2 downloaded, 0 skipped (already archived), 0 failed, 1 feed not read\n"), "\(text.errors)")
        let json = await runMonsoon(["archive"] + urls + ["-o", "A", "--json"], in: folder.path)
        let summary = json.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .first { $0["event"] as? String == "summary" }
        #expect(json.status == 1 && summary?["feedsFailed"] as? Int == 1 && summary?["skipped"] as? Int == 2, "\(json.output)")
    }

    @Test func syncAndDownloadIntoAnArchiveFolderAddToItsManifest() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = ArchiveCommandTests.serve(server, count: 4)
        _ = ArchiveCommandTests.serve(server, count: 2)
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("A")], in: folder.path).status == 0)
        let archived = await runMonsoon(["archive", server.url("/feed.xml").absoluteString], in: folder.path)
        #expect(archived.status == 0, "\(archived.errors)")
        #expect(await runMonsoon(["config", "set", "auto-download", "on", "--podcast", "1"], in: folder.path).status == 0)
        _ = ArchiveCommandTests.serve(server, count: 4)
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.status == 0 && synced.output.contains("finished e"), "\(synced.output)\(synced.errors)")
        let show = folder.file("A/Archive Show")
        let manifest = try ArchiveFolderTests.manifest(show)
        #expect(Self.episodeFiles(manifest) == ["2024-02-01 - Talk 1.mp3", "2024-02-02 - Interview 2.mp3", "2024-02-03 - Talk 3.mp3", "2024-02-04 - Interview 4.mp3"])
        let entry = try #require((manifest["files"] as? [[String: Any]])?.first { $0["file"] as? String == "2024-02-04 - Interview 4.mp3" })
        #expect(entry["sha256"] as? String == bodies[3].sha256Hex() && entry["guid"] as? String == "g4")
        #expect(ArchiveFolderTests.files(manifest).contains("feed.xml"), "merged: the archive's own entries stay")
        #expect(await Self.verify("A", in: folder) == (0, "monsoon: verified 5 files in 1 folder: all as listed"))

        // `download` of a queued episode too.
        _ = ArchiveCommandTests.serve(server, count: 5)
        #expect(await runMonsoon(["config", "set", "auto-download", "off", "--podcast", "1"], in: folder.path).status == 0)
        #expect(await runMonsoon(["refresh"], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", "--podcast", "1", "--latest", "1"], in: folder.path).status == 0)
        let downloaded = await runMonsoon(["download"], in: folder.path)
        #expect(downloaded.status == 0 && server.requests(for: "/ep5.mp3").count == 1, "\(downloaded.output)\(downloaded.errors)")
        #expect(Self.episodeFiles(try ArchiveFolderTests.manifest(show)).last == "2024-02-05 - Talk 5.mp3")
        #expect(await Self.verify("A", in: folder) == (0, "monsoon: verified 6 files in 1 folder: all as listed"))
    }

    @Test func repairFetchesWhatWentAndNeverTakesOtherBytes() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = ArchiveCommandTests.serve(server, count: 3)
        #expect(await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A"], in: folder.path).status == 0)
        let show = folder.file("A/Archive Show")
        let (talk1, interview2, talk3) = (show + "/2024-02-01 - Talk 1.mp3", show + "/2024-02-02 - Interview 2.mp3", show + "/2024-02-03 - Talk 3.mp3")
        try FileManager.default.removeItem(atPath: interview2)
        try Data("changed".utf8).write(to: URL(fileURLWithPath: talk3))
        #expect(chmod(talk3, 0o600) == 0)
        let repaired = await runMonsoon(["verify", "A", "--repair"], in: folder.path)
        #expect(repaired.status == 0, "\(repaired.output)\(repaired.errors)")
        #expect(repaired.output == "missing \(interview2)\nchanged \(talk3)\nrepaired \(interview2)\nrepaired \(talk3)\n")
        #expect(repaired.errors.hasSuffix("monsoon: repaired 2, could not repair 0\n"), "\(repaired.errors)")
        #expect(try SHA256.hex(fileAt: interview2) == bodies[1].sha256Hex() && SHA256.hex(fileAt: talk3) == bodies[2].sha256Hex())
        #expect(server.requests(for: "/ep2.mp3").count == 2 && server.requests(for: "/ep3.mp3").count == 2)
        #expect((try FileManager.default.attributesOfItem(atPath: talk3)[.posixPermissions] as? Int) == 0o600, "the file's permissions stay")
        #expect(await Self.verify("A", in: folder) == (0, "monsoon: verified 4 files in 1 folder: all as listed"))

        // The server now serves other bytes for one, and nothing for another: both said, nothing replaced.
        server.setRoute("/ep3.mp3", Route(body: .pattern(size: 20_003, seed: 99), contentType: "audio/mpeg"))
        server.setRoute("/ep1.mp3", Route.html(status: 404, "gone"))
        try Data("changed".utf8).write(to: URL(fileURLWithPath: talk3))
        try FileManager.default.removeItem(atPath: talk1)
        let refused = await runMonsoon(["verify", "A", "--repair", "--json"], in: folder.path)
        #expect(refused.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(refused.output.utf8)) as? [String: Any])
        #expect(object["repaired"] as? [String] == [] && object["missing"] as? [String] == [talk1] && object["changed"] as? [String] == [talk3])
        let failures = try #require(object["notRepaired"] as? [[String: String]])
        #expect(failures.map { $0["path"] } == [talk1, talk3])
        #expect(failures[0]["reason"]?.contains("404") == true && failures[0]["reason"]?.hasSuffix("; run 'monsoon verify --repair' again later") == true, "\(failures)")
        #expect(failures[1]["reason"]?.contains("now serves other bytes") == true && failures[1]["reason"]?.hasSuffix("the file was left as it is; restore it from a copy of your own") == true)
        #expect(try String(contentsOfFile: talk3, encoding: .utf8) == "changed" && !FileManager.default.fileExists(atPath: talk1))
        #expect(folder.contents("A/Archive Show").allSatisfy { !$0.contains("monsoon-repair") || $0.hasSuffix(".part") }, "\(folder.contents("A/Archive Show"))")
        let plain = await runMonsoon(["verify", "A", "--repair"], in: folder.path)
        #expect(plain.status == 1 && plain.errors.contains("monsoon: cannot repair \(talk3): ") && plain.errors.hasSuffix("monsoon: repaired 0, could not repair 2\n"),
                "\(plain.errors)")
    }

    /// A received manifest that lists the manifest itself (or the feed's copy) as an episode is
    /// refused, never repaired over; it is reported, and the archive's other folders are checked.
    @Test func aManifestListingTheFolderOwnFilesIsReportedAndTheRestChecked() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = ArchiveCommandTests.serve(server, count: 2)
        ArchiveFolderTests.serve(server, "/other.xml", title: "Other Show", episodes: [("One", "/o1.mp3", "audio/mpeg")])
        #expect(await runMonsoon(["archive", server.url("/feed.xml").absoluteString, server.url("/other.xml").absoluteString, "-o", "A"], in: folder.path).status == 0)
        let show = folder.file("A/Archive Show")
        for own in ["monsoon-manifest.json", "./feed.xml"] {
            let crafted = """
                {"podcast": "Archive Show", "feedURL": "\(server.url("/feed.xml").absoluteString)", "generated": "2024-01-01T00:00:00Z",
                 "files": [{"kind": "episode", "file": "\(own)", "size": 5, "sha256": "\(String(repeating: "0", count: 64))",
                            "sourceURL": "\(server.url("/evil.mp3").absoluteString)"}]}
                """
            try Data(crafted.utf8).write(to: URL(fileURLWithPath: show + "/monsoon-manifest.json"))
            server.resetStatistics()
            let run = await runMonsoon(["verify", "A", "--repair", "--json"], in: folder.path)
            #expect(run.status == 1)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
            let unreadable = try #require(object["unreadable"] as? [[String: String]])
            #expect(unreadable.map { $0["path"] } == [show + "/monsoon-manifest.json"])
            #expect(unreadable.first?["reason"] == "\(show)/monsoon-manifest.json lists '\(own)', the podcast folder's own file, as an episode; it was not written by Monsoon")
            #expect(object["folders"] as? [String] == [folder.file("A/Other Show")], "the other podcast is checked")
            #expect(object["checked"] as? Int == 2 && object["repaired"] as? [String] == [], "its episode and its feed")
            #expect(try String(contentsOfFile: show + "/monsoon-manifest.json", encoding: .utf8) == crafted, "never written over")
            #expect(server.requests.isEmpty)
        }
        let plain = await runMonsoon(["verify", "A"], in: folder.path)
        #expect(plain.status == 1 && plain.output == "unreadable \(show)/monsoon-manifest.json\n", "\(plain.output)")
        #expect(plain.errors.hasSuffix("monsoon: verified 2 files in 1 folder: 0 missing, 0 changed, 0 extra, 1 manifest that cannot be read (its files not checked)\n"),
                "\(plain.errors)")
    }

    /// A private feed's manifest has `***` for its token: the repair asks the library for the URL.
    @Test func repairFetchesAPrivateEpisodeWithTheLibrarysURL() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 30_000, seed: 5)
        server.setRoute("/private.mp3", Route(body: body, contentType: "audio/mpeg"))
        let media = server.url("/private.mp3").absoluteString + "?token=s3cret"
        let feed = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Members</title><item><title>Bonus</title><guid>b1</guid>"
            + "<pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate><enclosure url=\"\(media)\" type=\"audio/mpeg\"/></item></channel></rss>"
        server.setRoute("/members.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
        #expect(await runMonsoon(["archive", server.url("/members.xml").absoluteString, "-o", "A"], in: folder.path).status == 0)
        let file = folder.file("A/Members/2024-01-01 - Bonus.mp3")
        let entry = try #require((try ArchiveFolderTests.manifest(folder.file("A/Members"))["files"] as? [[String: Any]])?.first { $0["kind"] as? String == "episode" })
        #expect(entry["sourceURL"] as? String == server.url("/private.mp3").absoluteString + "?token=***")
        try FileManager.default.removeItem(atPath: file)
        let repaired = await runMonsoon(["verify", "A", "--repair"], in: folder.path)
        #expect(repaired.status == 0 && repaired.output.hasSuffix("repaired \(file)\n"), "\(repaired.output)\(repaired.errors)")
        #expect(server.requests.filter { $0.path.hasPrefix("/private.mp3") }.map(\.path) == ["/private.mp3?token=s3cret", "/private.mp3?token=s3cret"])
        #expect(try SHA256.hex(fileAt: file) == body.sha256Hex())
    }

    @Test func latestKeepsTheNewestAndMissingFilesAreCounted() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = ArchiveCommandTests.serve(server, count: 6)
        let feed = server.url("/feed.xml").absoluteString
        let first = await runMonsoon(["archive", feed, "-o", "A", "--newest-first", "--latest", "3"], in: folder.path)
        #expect(first.status == 0 && first.errors.contains("archived: 3 downloaded, 0 skipped (already archived), 0 failed"), "\(first.errors)")
        #expect(server.requests.filter { $0.path.hasPrefix("/ep") }.map(\.path).sorted() == ["/ep4.mp3", "/ep5.mp3", "/ep6.mp3"])
        let second = await runMonsoon(["archive", feed, "-o", "A", "--newest-first", "--latest", "3"], in: folder.path)
        #expect(second.errors.contains("archived: 0 downloaded, 3 skipped (already archived), 0 failed"), "\(second.errors)")
        #expect(server.requests.filter { $0.path.hasPrefix("/ep") }.count == 3, "nothing fetched twice")
        // One new episode: only it.
        _ = ArchiveCommandTests.serve(server, count: 7)
        let third = await runMonsoon(["archive", feed, "-o", "A", "--latest", "3"], in: folder.path)
        #expect(third.errors.contains("archived: 1 downloaded, 2 skipped (already archived), 0 failed"), "\(third.errors)")
        #expect(server.requests(for: "/ep7.mp3").count == 1 && server.requests(for: "/ep4.mp3").count == 1)

        try FileManager.default.removeItem(atPath: folder.file("A/Archive Show/2024-02-06 - Interview 6.mp3"))
        let missing = await runMonsoon(["archive", feed, "-o", "A", "--latest", "3"], in: folder.path)
        #expect(missing.status == 0)
        #expect(missing.errors.contains("archived: 0 downloaded, 2 skipped (already archived), 0 failed\n"), "\(missing.errors)")
        #expect(missing.errors.hasSuffix("\nmonsoon: 1 missing from disk: run with --refetch-missing to fetch it again\n"), "\(missing.errors)")
        let json = await runMonsoon(["archive", feed, "-o", "A", "--latest", "3", "--json"], in: folder.path)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data((json.output.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
        #expect(summary["skipped"] as? Int == 2 && summary["missing"] as? Int == 1)
        let bad = await runMonsoon(["archive", feed, "--latest", "0"], in: folder.path)
        #expect(bad.status == 2 && bad.errors.contains("--latest must be at least 1"))
    }

    @Test func allArchivesEverySubscriptionAndOPMLComesThroughAPipe() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let nothing = await runMonsoon(["archive", "-o", "A"], in: folder.path)
        #expect(nothing.status == 2 && nothing.errors.contains("monsoon: give at least one feed URL, --opml FILE or --all"), "\(nothing.errors)")
        let none = await runMonsoon(["archive", "--all", "-o", "A"], in: folder.path)
        #expect(none.status == 1 && none.errors == "monsoon: --all: there are no subscriptions to archive; subscribe with 'monsoon add FEED_URL' or give feed URLs\n",
                "\(none.errors)")
        for (path, title) in [("/a.xml", "Alpha"), ("/b.xml", "Beta"), ("/c.xml", "Gamma"), ("/d.xml", "Delta")] {
            ArchiveFolderTests.serve(server, path, title: title, episodes: [("\(title) One", "/\(title).mp3", "audio/mpeg")])
        }
        for path in ["/a.xml", "/b.xml"] { #expect(await runMonsoon(["add", server.url(path).absoluteString], in: folder.path).status == 0) }
        // A feed named and subscribed to is archived once.
        let all = await runMonsoon(["archive", "--all", server.url("/a.xml").absoluteString, "-o", "A"], in: folder.path)
        #expect(all.status == 0 && all.errors.contains("archived: 2 downloaded, 0 skipped"), "\(all.errors)")
        #expect(folder.contents("A") == ["Alpha", "Beta"] && server.requests(for: "/Alpha.mp3").count == 1)

        func opml(_ path: String) -> String {
            "<?xml version=\"1.0\"?><opml version=\"2.0\"><body><outline text=\"x\" type=\"rss\" xmlUrl=\"\(server.url(path).absoluteString)\"/></body></opml>"
        }
        let piped = await runMonsoon(["archive", "--opml", "-", "-o", "A"], in: folder.path, stdin: opml("/c.xml"))
        #expect(piped.status == 0 && piped.errors.contains("archived: 1 downloaded"), "\(piped.errors)")
        // Process substitution, as a shell gives it: a FIFO under /dev/fd.
        try opml("/d.xml").write(toFile: folder.file("d.opml"), atomically: true, encoding: .utf8)
        let command = "MONSOON_HOME='\(folder.file(".monsoon"))' '\(monsoonBinary)' archive --quiet --opml <(cat '\(folder.file("d.opml"))') -o '\(folder.file("A"))'"
        let substituted = try await ArchiveCommandTests.shell("/bin/bash", ["-c", command], input: "")
        #expect(substituted.status == 0)
        #expect(folder.contents("A") == ["Alpha", "Beta", "Delta", "Gamma"])
        #expect(await Self.verify("A", in: folder) == (0, "monsoon: verified 8 files in 4 folders: all as listed"))
    }

    @Test func portableNamesFromTheFlagOrTheSetting() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        ArchiveFolderTests.serve(server, "/p.xml", title: "Q&A: Live?", episodes: [("CON", "/p1.mp3", "audio/mpeg"), ("What? *Really*. ", "/p2.mp3", "audio/mpeg")])
        ArchiveFolderTests.serve(server, "/s.xml", title: "Pipe | Dream", episodes: [("aux", "/s1.mp3", "audio/mpeg")])
        let template = ["--template", "{podcast}/{title}.{ext}"]
        let flagged = await runMonsoon(["archive", server.url("/p.xml").absoluteString, "-o", "A", "--portable-names"] + template, in: folder.path)
        #expect(flagged.status == 0, "\(flagged.errors)")
        #expect(folder.contents("A") == ["Q&A_ Live_"])
        #expect(folder.contents("A/Q&A_ Live_") == ["CON_.mp3", "What_ _Really_.mp3", "feed.xml", "monsoon-manifest.json"])

        // Archived before portable names were on: its files stay where they are.
        ArchiveFolderTests.serve(server, "/t.xml", title: "Tic: Tac", episodes: [("One", "/t1.mp3", "audio/mpeg")])
        #expect(await runMonsoon(["archive", server.url("/t.xml").absoluteString, "-o", "A"] + template, in: folder.path).status == 0)

        let set = await runMonsoon(["config", "set", "portable-names", "yes"], in: folder.path)
        #expect(set.status == 0)
        #expect(await runMonsoon(["config", "get", "portable-names"], in: folder.path).output == "on\n")
        let byTheSetting = await runMonsoon(["archive", server.url("/s.xml").absoluteString, "-o", "A"] + template, in: folder.path)
        #expect(byTheSetting.status == 0, "\(byTheSetting.errors)")
        #expect(folder.contents("A/Pipe _ Dream") == ["aux_.mp3", "feed.xml", "monsoon-manifest.json"])
        ArchiveFolderTests.serve(server, "/t.xml", title: "Tic: Tac", episodes: [("One", "/t1.mp3", "audio/mpeg"), ("Two?", "/t2.mp3", "audio/mpeg")])
        #expect(await runMonsoon(["archive", server.url("/t.xml").absoluteString, "-o", "A"] + template, in: folder.path).status == 0)
        #expect(folder.contents("A/Tic: Tac") == ["One.mp3", "feed.xml", "monsoon-manifest.json"])
        #expect(folder.contents("A/Tic_ Tac") == ["Two_.mp3", "feed.xml", "monsoon-manifest.json"])
        #expect(await Self.verify("A", in: folder) == (0, "monsoon: verified 9 files in 4 folders: all as listed"))
        let bad = await runMonsoon(["config", "set", "portable-names", "maybe"], in: folder.path)
        #expect(bad.status != 0 && bad.errors.contains("'maybe' is not a valid portable-names"), "\(bad.errors)")
    }
}
