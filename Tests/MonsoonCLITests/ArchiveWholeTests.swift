import Foundation
import MonsoonPodcasts
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// An archive stays whole when kept up to date another way: a podcast remembers its archive folder, where `sync` and
/// `download` put its new episodes with the feed copy and manifest; `feed.xml` is there even when the feed was read
/// before; and episodes that arrived before auto-download was on are said, with the way to queue them.
@Suite struct ArchiveWholeTests {
    /// "Whole Show", its `count` episodes `/wN.mp3` (`title` N, published N Mar 2024), the feed with an ETag, so a
    /// second read of it is a 304. With `extras`, artwork `/cover.jpg` and each episode's transcript `/tN.vtt` and
    /// chapters `/cN.json`. Returns the feed's bytes.
    @discardableResult
    static func serve(_ server: TestServer, count: Int, title: String = "Talk", extras: Bool = false) -> String {
        var items = ""
        for index in 1...count {
            server.setRoute("/w\(index).mp3", Route(body: .pattern(size: 5_000 + index, seed: UInt64(index)), contentType: "audio/mpeg"))
            server.setRoute("/t\(index).vtt", Route(body: .bytes(Array("WEBVTT\n\n\(index)\n".utf8)), contentType: "text/vtt"))
            server.setRoute("/c\(index).json", Route(body: .bytes(Array("{\"version\":\"1.2.0\",\"chapters\":[{\"startTime\":\(index)}]}".utf8)), contentType: "application/json"))
            let more = !extras ? "" : "<podcast:transcript url=\"\(server.url("/t\(index).vtt").absoluteString)\" type=\"text/vtt\"/>"
                + "<podcast:chapters url=\"\(server.url("/c\(index).json").absoluteString)\" type=\"application/json+chapters\"/>"
            items = "<item><title>\(title) \(index)</title><guid>w\(index)</guid><pubDate>\(String(format: "%02d", index)) Mar 2024 10:00:00 GMT</pubDate>"
                + "<enclosure url=\"\(server.url("/w\(index).mp3").absoluteString)\" type=\"audio/mpeg\" length=\"\(5_000 + index)\"/>\(more)</item>\n" + items
        }
        server.setRoute("/cover.jpg", Route(body: .pattern(size: 3_000, seed: 77), contentType: "image/jpeg"))
        let artwork = extras ? "<itunes:image href=\"\(server.url("/cover.jpg").absoluteString)\"/>" : ""
        let feed = "<?xml version=\"1.0\"?><rss version=\"2.0\" xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\" "
            + "xmlns:podcast=\"https://podcastindex.org/namespace/1.0\"><channel><title>Whole Show</title>\(artwork)\n\(items)</channel></rss>"
        server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml", etag: "\"v\(count)\""))
        return feed
    }

    static func entries(_ folder: String) throws -> [String] {
        ArchiveFolderTests.files(try ArchiveFolderTests.manifest(folder))
    }

    /// The user's sequence: archive with -o, auto-download on, sync. The new episode lands in the archive with its
    /// manifest entry and the new feed copy, not in download-root; `archive --all` without -o keeps the same folder.
    @Test func syncAndDownloadKeepThePodcastsArchiveFolder() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, count: 1)
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("Podcasts")], in: folder.path).status == 0)
        let archived = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "--output", "Archive"], in: folder.path)
        #expect(archived.status == 0, "\(archived.errors)")
        #expect(await runMonsoon(["config", "get", "folder", "--podcast", "1"], in: folder.path).output == folder.file("Archive") + "\n")
        #expect(await runMonsoon(["config", "set", "auto-download", "on", "--podcast", "1"], in: folder.path).status == 0)

        let feed = Self.serve(server, count: 2)
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.status == 0, "\(synced.output)\(synced.errors)")
        let show = folder.file("Archive/Whole Show")
        #expect(folder.contents("Archive/Whole Show") == ["2024-03-01 - Talk 1.mp3", "2024-03-02 - Talk 2.mp3", "feed.xml", "monsoon-manifest.json"])
        #expect(!FileManager.default.fileExists(atPath: folder.file("Podcasts")), "nothing goes to download-root")
        #expect(try Self.entries(show) == ["2024-03-01 - Talk 1.mp3", "2024-03-02 - Talk 2.mp3", "feed.xml"])
        #expect(try String(contentsOfFile: show + "/feed.xml", encoding: .utf8) == feed, "the feed as this sync read it")
        let verified = await runMonsoon(["verify", "Archive"], in: folder.path)
        #expect(verified.status == 0 && verified.errors == "monsoon: verified 3 files in 1 folder: all as listed\n", "\(verified.output)\(verified.errors)")
        let planned = await runMonsoon(["archive", "--all", "--dry-run"], in: folder.path)
        #expect(planned.output.contains("Whole Show (\(server.url("/feed.xml").absoluteString)): 0 to download, 2 already archived"), "\(planned.output)")

        // `download` of a queued episode, and `archive --all` without -o: the same folder.
        Self.serve(server, count: 4)
        #expect(await runMonsoon(["config", "set", "auto-download", "off", "--podcast", "1"], in: folder.path).status == 0)
        #expect(await runMonsoon(["refresh"], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", "3"], in: folder.path).status == 0)
        let downloaded = await runMonsoon(["download"], in: folder.path)
        #expect(downloaded.status == 0, "\(downloaded.output)\(downloaded.errors)")
        let again = await runMonsoon(["archive", "--all"], in: folder.path)
        #expect(again.status == 0, "\(again.errors)")
        #expect(try Self.entries(show) == ["2024-03-01 - Talk 1.mp3", "2024-03-02 - Talk 2.mp3", "2024-03-03 - Talk 3.mp3", "2024-03-04 - Talk 4.mp3", "feed.xml"])
        #expect(!FileManager.default.fileExists(atPath: folder.file("Podcasts")))
        #expect(await runMonsoon(["verify", "Archive"], in: folder.path).status == 0)

        // Another -o archives there this time; the podcast keeps its folder, and says how to move on.
        let elsewhere = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "Other"], in: folder.path)
        #expect(elsewhere.status == 0)
        #expect(elsewhere.errors.contains("monsoon: Whole Show: archived in \(folder.file("Other")) this time; its folder stays \(folder.file("Archive")), "
                                          + "where sync and download put its new episodes; to move on to \(folder.file("Other")): "
                                          + "monsoon config set folder '\(folder.file("Other"))' --podcast 1"), "\(elsewhere.errors)")
        #expect(await runMonsoon(["config", "get", "folder", "--podcast", "1"], in: folder.path).output == folder.file("Archive") + "\n")
    }

    /// An archive made with --template and --portable-names gets its new episodes from `sync` so named, not by the
    /// setting; a later archive into the same folder with another --template changes that, and says so.
    @Test func syncNamesNewEpisodesByTheArchivesTemplate() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let feed = server.url("/feed.xml").absoluteString
        Self.serve(server, count: 1, title: "Q: Talk")
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("Podcasts")], in: folder.path).status == 0)
        let archived = await runMonsoon(["archive", feed, "-o", "Archive", "--template", "{podcast}/{year}/{title}.{ext}", "--portable-names"], in: folder.path)
        #expect(archived.status == 0, "\(archived.errors)")
        #expect(await runMonsoon(["config", "set", "auto-download", "on", "--podcast", "1"], in: folder.path).status == 0)

        Self.serve(server, count: 2, title: "Q: Talk")
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.status == 0, "\(synced.output)\(synced.errors)")
        let show = folder.file("Archive/Whole Show")
        #expect(folder.contents("Archive/Whole Show/2024") == ["Q_ Talk 1.mp3", "Q_ Talk 2.mp3"])
        #expect(try SHA256.hex(fileAt: show + "/2024/Q_ Talk 2.mp3") == Body.pattern(size: 5_002, seed: 2).sha256Hex())
        #expect(try Self.entries(show) == ["2024/Q_ Talk 1.mp3", "2024/Q_ Talk 2.mp3", "feed.xml"])
        #expect(!FileManager.default.fileExists(atPath: folder.file("Podcasts")), "nothing goes to download-root")
        #expect(await runMonsoon(["config", "get", "template"], in: folder.path).output == "{podcast}/{date} - {title}.{ext}\n", "the setting stays")
        #expect(await runMonsoon(["verify", "Archive"], in: folder.path).status == 0)

        let changed = await runMonsoon(["archive", feed, "-o", "Archive", "--template", "{podcast}/{title}.{ext}"], in: folder.path)
        #expect(changed.status == 0, "\(changed.errors)")
        #expect(changed.errors.contains("monsoon: Whole Show: sync and download name its new episodes by '{podcast}/{title}.{ext}' from now on, "
                                        + "as this archive did; the files named before keep their names\n"), "\(changed.errors)")
        Self.serve(server, count: 3, title: "Q: Talk")
        let again = await runMonsoon(["sync"], in: folder.path)
        #expect(again.status == 0, "\(again.output)\(again.errors)")
        #expect(folder.contents("Archive/Whole Show") == ["2024", "Q_ Talk 3.mp3", "feed.xml", "monsoon-manifest.json"], "still portable")
        #expect(try Self.entries(show) == ["2024/Q_ Talk 1.mp3", "2024/Q_ Talk 2.mp3", "Q_ Talk 3.mp3", "feed.xml"])
        let same = await runMonsoon(["archive", feed, "-o", "Archive"], in: folder.path)
        #expect(same.status == 0 && !same.errors.contains("from now on"), "\(same.errors)")
    }

    /// An archive made with --with-artwork, --with-transcripts and --with-chapters gets them for the new episodes
    /// `sync` and `download` bring, listed in its manifest; the artwork it has is not fetched again.
    @Test func syncAndDownloadFetchTheArchivesExtras() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, count: 1, extras: true)
        let archived = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "Archive", "--with-artwork", "--with-transcripts",
                                         "--with-chapters"], in: folder.path)
        #expect(archived.status == 0, "\(archived.errors)")
        #expect(await runMonsoon(["config", "set", "auto-download", "on", "--podcast", "1"], in: folder.path).status == 0)

        Self.serve(server, count: 2, extras: true)
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.status == 0, "\(synced.output)\(synced.errors)")
        let show = folder.file("Archive/Whole Show")
        let talk2 = ["2024-03-02 - Talk 2.chapters.json", "2024-03-02 - Talk 2.mp3", "2024-03-02 - Talk 2.transcript.vtt"]
        #expect(folder.contents("Archive/Whole Show") == ["2024-03-01 - Talk 1.chapters.json", "2024-03-01 - Talk 1.mp3", "2024-03-01 - Talk 1.transcript.vtt"]
                + talk2 + ["cover.jpg", "feed.xml", "monsoon-manifest.json"])
        #expect(try SHA256.hex(fileAt: show + "/2024-03-02 - Talk 2.transcript.vtt") == Body.bytes(Array("WEBVTT\n\n2\n".utf8)).sha256Hex())
        #expect(server.requests(for: "/cover.jpg").count == 1 && server.requests(for: "/t2.vtt").count == 1)
        #expect(try Self.entries(show).filter { $0.hasPrefix("2024-03-02") } == talk2)
        let manifest = try #require(try ArchiveFolderTests.manifest(show)["files"] as? [[String: Any]])
        #expect(manifest.first { $0["file"] as? String == talk2[0] }?["kind"] as? String == "chapters")

        Self.serve(server, count: 3, extras: true)
        #expect(await runMonsoon(["config", "set", "auto-download", "off", "--podcast", "1"], in: folder.path).status == 0)
        #expect(await runMonsoon(["refresh"], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", "3"], in: folder.path).status == 0)
        let downloaded = await runMonsoon(["download"], in: folder.path)
        #expect(downloaded.status == 0, "\(downloaded.output)\(downloaded.errors)")
        #expect(try Self.entries(show).filter { $0.hasPrefix("2024-03-03") }
                == ["2024-03-03 - Talk 3.chapters.json", "2024-03-03 - Talk 3.mp3", "2024-03-03 - Talk 3.transcript.vtt"])
        #expect(await runMonsoon(["verify", "Archive"], in: folder.path).status == 0)
    }

    /// An archive made with --write-info-json gets the sidecars of the new episodes `sync` brings without it, and a
    /// completed episode's missing one from `download`; a podcast archived without it gets none. A row saved before
    /// sidecars were remembered reads as without.
    @Test func syncWritesTheSidecarsTheArchiveAskedFor() async throws {
        let (server, plain) = (try TestServer(), try TestServer())
        let folder = Folder()
        defer { folder.remove(); server.stop(); plain.stop() }
        Self.serve(server, count: 1)
        Self.serve(plain, count: 1)
        let archived = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "Archive", "--write-info-json"], in: folder.path)
        #expect(archived.status == 0, "\(archived.errors)")
        #expect(await runMonsoon(["archive", plain.url("/feed.xml").absoluteString, "-o", "Plain"], in: folder.path).status == 0)
        #expect(await runMonsoon(["config", "set", "auto-download", "on"], in: folder.path).status == 0)

        Self.serve(server, count: 2)
        Self.serve(plain, count: 2)
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.status == 0, "\(synced.output)\(synced.errors)")
        let talk2 = folder.file("Archive/Whole Show/2024-03-02 - Talk 2.mp3")
        let info = try InfoJSONTests.json(talk2 + ".info.json")
        #expect((info["episode"] as? [String: Any])?["title"] as? String == "Talk 2")
        #expect((info["download"] as? [String: Any])?["sha256"] as? String == Body.pattern(size: 5_002, seed: 2).sha256Hex())
        // Its folder is numbered: the other podcast has the name.
        let other = "Plain/" + (try #require(folder.contents("Plain").first))
        #expect(folder.contents(other).filter { $0.hasSuffix(".mp3") || $0.hasSuffix(".info.json") } == ["2024-03-01 - Talk 1.mp3", "2024-03-02 - Talk 2.mp3"])

        // One gone is written again by a run with nothing to download; the other podcast's stay missing.
        let talk1 = folder.file("Archive/Whole Show/2024-03-01 - Talk 1.mp3.info.json")
        try FileManager.default.removeItem(atPath: talk1)
        let downloaded = await runMonsoon(["download"], in: folder.path)
        #expect(downloaded.status == 0, "\(downloaded.output)\(downloaded.errors)")
        #expect((try InfoJSONTests.json(talk1)["episode"] as? [String: Any])?["title"] as? String == "Talk 1")
        #expect(!folder.contents(other).contains { $0.hasSuffix(".info.json") })

        let old = try JSONDecoder().decode(ArchiveRun.Remembered.self, from: Data(#"{"portable":true,"extras":1}"#.utf8))
        #expect(old == ArchiveRun.Remembered(portable: true, extras: .artwork))
    }

    /// `config set folder` says that the files downloaded before stay; `verify` of the new folder lists them, and a
    /// podcast folder without feed.xml.
    @Test func changingTheFolderSaysWhatStaysAndVerifyListsIt() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, count: 1)
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("Podcasts")], in: folder.path).status == 0)
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", "1"], in: folder.path).status == 0)
        #expect(await runMonsoon(["download"], in: folder.path).status == 0)

        // A folder is made by its user: sync never makes an archive root, which may be a disk not mounted.
        try FileManager.default.createDirectory(atPath: folder.file("Archive"), withIntermediateDirectories: true)
        let global = await runMonsoon(["config", "set", "folder", folder.file("Archive")], in: folder.path)
        #expect(global.status == 2 && global.errors.hasPrefix("monsoon: folder is a podcast's own: give --podcast PODCAST"), "\(global.errors)")
        let set = await runMonsoon(["config", "set", "folder", folder.file("Archive"), "--podcast", "1"], in: folder.path)
        #expect(set.status == 0 && set.output == "folder = \(folder.file("Archive")) for podcast 1\n")
        #expect(set.errors == "monsoon: its new episodes go to \(folder.file("Archive")) from now on; the files downloaded before stay in the download root, "
                + "and to list those the new folder lacks: monsoon verify '\(folder.file("Archive"))'\n", "\(set.errors)")

        Self.serve(server, count: 2)
        #expect(await runMonsoon(["config", "set", "auto-download", "on", "--podcast", "1"], in: folder.path).status == 0)
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.status == 0, "\(synced.output)\(synced.errors)")
        #expect(folder.contents("Archive/Whole Show") == ["2024-03-02 - Talk 2.mp3", "feed.xml", "monsoon-manifest.json"])
        let outside = folder.file("Podcasts/Whole Show/2024-03-01 - Talk 1.mp3")
        let verified = await runMonsoon(["verify", "Archive"], in: folder.path)
        // Said, but no fault of the archive: nothing the user does there clears it, so it leaves the status at 0.
        #expect(verified.status == 0 && verified.output == "outside \(outside)\n", "\(verified.output)")
        #expect(verified.errors == "monsoon: verified 2 files in 1 folder: all as listed; 1 episode downloaded before this was their podcast's folder "
                + "stays outside it\n", "\(verified.errors)")
        let repaired = await runMonsoon(["verify", "Archive", "--repair"], in: folder.path)
        #expect(repaired.status == 0 && repaired.output == "outside \(outside)\n", "\(repaired.output)\(repaired.errors)")
        // One podcast's folder in the archive: the same.
        let podcastFolder = await runMonsoon(["verify", "Archive/Whole Show"], in: folder.path)
        #expect(podcastFolder.status == 0 && podcastFolder.output == "outside \(outside)\n", "\(podcastFolder.output)\(podcastFolder.errors)")

        // A folder whose manifest lists no feed copy, and has none.
        let show = folder.file("Archive/Whole Show")
        var manifest = try ArchiveFolderTests.manifest(show)
        manifest["files"] = (manifest["files"] as? [[String: Any]])?.filter { $0["kind"] as? String != "feed" }
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: show + "/monsoon-manifest.json"))
        try FileManager.default.removeItem(atPath: show + "/feed.xml")
        let json = await runMonsoon(["verify", "Archive", "--json"], in: folder.path)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(json.status == 1 && report["withoutFeed"] as? [String] == [show + "/feed.xml"] && report["outside"] as? [String] == [outside], "\(json.output)")
        let text = await runMonsoon(["verify", "Archive"], in: folder.path)
        #expect(text.status == 1 && text.errors == "monsoon: verified 1 file in 1 folder: 0 missing, 0 changed, 0 extra, 1 without feed.xml; run 'monsoon sync' "
                + "or 'monsoon archive' to write it; 1 episode downloaded before this was their podcast's folder stays outside it\n", "\(text.errors)")
    }

    /// A feed read by `add` answers `archive` with a 304: the folder's copy is read once more without conditions.
    @Test func feedXMLIsWrittenWhenTheFeedAnswers304() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let feed = Self.serve(server, count: 1)
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        let archived = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A"], in: folder.path)
        #expect(archived.status == 0, "\(archived.errors)")
        #expect(try String(contentsOfFile: folder.file("A/Whole Show/feed.xml"), encoding: .utf8) == feed)
        let asked = server.requests(for: "/feed.xml").map { $0.headers["if-none-match"] }
        #expect(asked == [nil, "\"v1\"", nil], "subscribed, refreshed (304), then read once without conditions")
        #expect(try Self.entries(folder.file("A/Whole Show")) == ["2024-03-01 - Talk 1.mp3", "feed.xml"])
        #expect(await runMonsoon(["verify", "A"], in: folder.path).status == 0)
        // Once there, a 304 leaves it as it is, and nothing more is asked.
        #expect(await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A"], in: folder.path).status == 0)
        #expect(server.requests(for: "/feed.xml").count == 4)
    }

    /// Episodes a sync brought while auto-download was off are said when it turns on, and `queue add --new` queues them.
    @Test func episodesThatArrivedBeforeAutoDownloadAreSaid() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, count: 2)
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("Podcasts")], in: folder.path).status == 0)
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        let none = await runMonsoon(["config", "set", "auto-download", "on", "--podcast", "1"], in: folder.path)
        #expect(none.status == 0 && none.errors.isEmpty, "the back catalogue did not arrive: \(none.errors)")
        #expect(await runMonsoon(["config", "set", "auto-download", "off", "--podcast", "1"], in: folder.path).status == 0)
        Self.serve(server, count: 4)
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.output.contains("Whole Show: 2 new, 0 updated"), "\(synced.output)")

        let on = await runMonsoon(["config", "set", "auto-download", "on", "--podcast", "1"], in: folder.path)
        #expect(on.status == 0 && on.output == "auto-download = on for podcast 1\n")
        #expect(on.errors == "monsoon: Whole Show: 2 episodes arrived before auto-download was on; queue them with 'monsoon queue add --new --podcast 1'\n",
                "\(on.errors)")
        let queued = await runMonsoon(["queue", "add", "--new", "--podcast", "1"], in: folder.path)
        #expect(queued.status == 0 && queued.output.hasPrefix("queued 2 episodes;"), "\(queued.output)\(queued.errors)")
        let list = await runMonsoon(["queue", "--json"], in: folder.path)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [[String: Any]])
        #expect(entries.compactMap { $0["title"] as? String } == ["Talk 3", "Talk 4"])
        // Queued, they are no longer new; and the podcast's own off wins over the global switch.
        #expect(await runMonsoon(["config", "set", "auto-download", "off", "--podcast", "1"], in: folder.path).status == 0)
        #expect(await runMonsoon(["config", "set", "auto-download", "on"], in: folder.path).errors.isEmpty)
        let usage = await runMonsoon(["queue", "add", "--new"], in: folder.path)
        #expect(usage.status == 2 && usage.errors.hasPrefix("monsoon: give episode ids, or --podcast PODCAST with --all, --latest N, --since YYYY-MM-DD or --new"),
                "\(usage.errors)")
    }
}
