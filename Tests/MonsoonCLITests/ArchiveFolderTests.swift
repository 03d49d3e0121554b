import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// Archive folders that cannot collide: each podcast has its own, an archive's own files keep
/// their names, and a manifest is only ever added to.
@Suite struct ArchiveFolderTests {
    /// A one-episode feed at `path` titled `title`, its episode `episode` at `media` (served as `type`).
    static func serve(_ server: TestServer, _ path: String, title: String, episodes: [(title: String, media: String, type: String)]) {
        var items = ""
        for (index, episode) in episodes.enumerated() {
            server.setRoute(episode.media, Route(body: .bytes(Array("\(path) \(episode.title)".utf8)), contentType: episode.type))
            items += "<item><title>\(episode.title)</title><guid>\(path)-\(index)</guid><pubDate>Mon, 0\(index + 1) Jan 2024 10:00:00 GMT</pubDate>"
                + "<enclosure url=\"\(server.url(episode.media).absoluteString)\" type=\"\(episode.type)\"/></item>"
        }
        let feed = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>\(title)</title>\(items)</channel></rss>"
        server.setRoute(path, Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
    }

    static func manifest(_ folder: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/monsoon-manifest.json"))) as? [String: Any])
    }

    static func files(_ manifest: [String: Any]) -> [String] {
        ((manifest["files"] as? [[String: Any]]) ?? []).compactMap { $0["file"] as? String }.sorted()
    }

    @Test func podcastsWhoseTitlesComeOutTheSameGetFoldersOfTheirOwn() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, "/a.xml", title: "Same Show", episodes: [("First", "/a1.mp3", "audio/mpeg")])
        Self.serve(server, "/b.xml", title: "same show", episodes: [("Second", "/b1.mp3", "audio/mpeg")])
        Self.serve(server, "/dot.xml", title: ".", episodes: [("Dot", "/d1.mp3", "audio/mpeg")])
        Self.serve(server, "/dotdot.xml", title: "..", episodes: [("Dots", "/dd1.mp3", "audio/mpeg")])
        for path in ["/a.xml", "/b.xml", "/dot.xml", "/dotdot.xml"] {
            let run = await runMonsoon(["archive", server.url(path).absoluteString, "-o", "A"], in: folder.path)
            #expect(run.status == 0, "\(path): \(run.errors)")
        }
        let host = "127.0.0.1:\(server.port)"
        #expect(folder.contents("A") == ["\(host)-dot.xml", "\(host)-dotdot.xml", "Same Show", "same show (2)"], "\(folder.contents("A"))")
        for (name, feed, episode) in [("Same Show", "/a.xml", "2024-01-01 - First.mp3"), ("same show (2)", "/b.xml", "2024-01-01 - Second.mp3"),
                                      ("\(host)-dot.xml", "/dot.xml", "2024-01-01 - Dot.mp3")] {
            let manifest = try Self.manifest(folder.file("A/\(name)"))
            #expect(Self.files(manifest) == [episode, "feed.xml"], "\(name)")
            #expect(manifest["feedURL"] as? String == server.url(feed).absoluteString)
            let copy = try String(contentsOfFile: folder.file("A/\(name)/feed.xml"), encoding: .utf8)
            #expect(copy.contains(server.url(feed).absoluteString.replacingOccurrences(of: feed, with: "")), "its own feed")
        }
        let verify = await runMonsoon(["verify", "A"], in: folder.path)
        #expect(verify.status == 0, "\(verify.output)\(verify.errors)")
    }

    /// A podcast keeps its folder: one subscribed earlier that renames itself to another's title
    /// does not take that one's folder.
    @Test func aPodcastKeepsItsFolderWhateverOthersAreCalled() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, "/a.xml", title: "First Name", episodes: [("One", "/a1.mp3", "audio/mpeg")])
        Self.serve(server, "/b.xml", title: "Tech Talk", episodes: [("Two", "/b1.mp3", "audio/mpeg")])
        for path in ["/a.xml", "/b.xml"] { #expect(await runMonsoon(["archive", server.url(path).absoluteString, "-o", "A"], in: folder.path).status == 0) }
        Self.serve(server, "/a.xml", title: "Tech Talk", episodes: [("One", "/a1.mp3", "audio/mpeg"), ("Three", "/a2.mp3", "audio/mpeg")])
        Self.serve(server, "/b.xml", title: "Tech Talk", episodes: [("Two", "/b1.mp3", "audio/mpeg"), ("Four", "/b2.mp3", "audio/mpeg")])
        for path in ["/a.xml", "/b.xml"] { #expect(await runMonsoon(["archive", server.url(path).absoluteString, "-o", "A"], in: folder.path).status == 0) }
        #expect(folder.contents("A") == ["First Name", "Tech Talk"])
        #expect(folder.contents("A/First Name").contains("2024-01-02 - Three.mp3"))
        #expect(folder.contents("A/Tech Talk").contains("2024-01-02 - Four.mp3"))
        #expect(Self.files(try Self.manifest(folder.file("A/Tech Talk"))) == ["2024-01-01 - Two.mp3", "2024-01-02 - Four.mp3", "feed.xml"])
        #expect(try String(contentsOfFile: folder.file("A/Tech Talk/feed.xml"), encoding: .utf8).contains("/b1.mp3"), "its own feed copy")
    }

    @Test func anEpisodeNeverTakesTheNameOfTheManifestOrTheFeedCopy() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // Audio as far as the feed says, at URLs whose extensions are the archive's own files'.
        Self.serve(server, "/f.xml", title: "Names", episodes: [("monsoon-manifest", "/m.json", "audio/mpeg"), ("feed", "/f2.xml", "audio/mpeg"),
                                                                ("Cover", "/c.jpg", "audio/mpeg")])
        let run = await runMonsoon(["archive", server.url("/f.xml").absoluteString, "-o", "A", "--template", "{podcast}/{title}.{ext}"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(folder.contents("A/Names") == ["Cover (2).jpg", "feed (2).xml", "feed.xml", "monsoon-manifest (2).json", "monsoon-manifest.json"])
        #expect(try String(contentsOfFile: folder.file("A/Names/monsoon-manifest (2).json"), encoding: .utf8) == "/f.xml monsoon-manifest")
        #expect(try String(contentsOfFile: folder.file("A/Names/feed (2).xml"), encoding: .utf8) == "/f.xml feed")
        let verify = await runMonsoon(["verify", "A"], in: folder.path)
        #expect(verify.status == 0, "\(verify.output)\(verify.errors)")
    }

    @Test func aManifestIsOnlyEverAddedTo() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, "/s.xml", title: "Kept", episodes: [("One", "/1.mp3", "audio/mpeg")])
        let url = server.url("/s.xml").absoluteString
        #expect(await runMonsoon(["archive", url, "-o", "A"], in: folder.path).status == 0)
        // Another podcast's file listed here (a folder two podcasts shared before): a run of this
        // podcast keeps it listed, with its hash as it was.
        let show = folder.file("A/Kept")
        try Data("other".utf8).write(to: URL(fileURLWithPath: show + "/other.mp3"))
        var manifest = try Self.manifest(show)
        var files = try #require(manifest["files"] as? [[String: Any]])
        files.append(["kind": "episode", "file": "other.mp3", "size": 5, "sha256": "0d2d1b5d3b6d4ac15d14fd5d2a9da4bb1bf47a1f8c8eab1a13c5e4d2a9e2ec4a"])
        manifest["files"] = files
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: show + "/monsoon-manifest.json"))
        Self.serve(server, "/s.xml", title: "Kept", episodes: [("One", "/1.mp3", "audio/mpeg"), ("Two", "/2.mp3", "audio/mpeg")])
        let again = await runMonsoon(["archive", url, "-o", "A"], in: folder.path)
        #expect(again.status == 0, "\(again.errors)")
        let merged = try Self.manifest(show)
        #expect(Self.files(merged) == ["2024-01-01 - One.mp3", "2024-01-02 - Two.mp3", "feed.xml", "other.mp3"])
        let other = (merged["files"] as? [[String: Any]])?.first { $0["file"] as? String == "other.mp3" }
        #expect(other?["sha256"] as? String == "0d2d1b5d3b6d4ac15d14fd5d2a9da4bb1bf47a1f8c8eab1a13c5e4d2a9e2ec4a", "kept as it was listed")

        // `delete` is on purpose: the file leaves the manifest too.
        let delete = await runMonsoon(["delete", "2"], in: folder.path)
        #expect(delete.status == 0, "\(delete.errors)")
        #expect(Self.files(try Self.manifest(show)) == ["2024-01-01 - One.mp3", "feed.xml", "other.mp3"])

        // A manifest that cannot be read stops the archive before anything is downloaded, names
        // itself, and is left as it is.
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: show + "/monsoon-manifest.json"))
        Self.serve(server, "/s.xml", title: "Kept", episodes: [("One", "/1.mp3", "audio/mpeg"), ("Two", "/2.mp3", "audio/mpeg"), ("Three", "/3.mp3", "audio/mpeg")])
        let damaged = await runMonsoon(["archive", url, "-o", "A"], in: folder.path)
        #expect(damaged.status == 1)
        #expect(damaged.errors == "monsoon: \(show)/monsoon-manifest.json cannot be read as a Monsoon manifest, so nothing was archived and it was "
                + "left as it is; move it away (the next archive writes a new one), then run again\n", "\(damaged.errors)")
        #expect(try String(contentsOfFile: show + "/monsoon-manifest.json", encoding: .utf8) == "{not json")
        #expect(server.requests(for: "/3.mp3").isEmpty, "nothing was downloaded")
        #expect(!FileManager.default.fileExists(atPath: show + "/2024-01-03 - Three.mp3"))
    }

    /// A private feed's copy (its tokens in its URL and its enclosures') is for the owner only;
    /// a public feed's is readable as any file.
    @Test func aPrivateFeedsCopyIsPrivate() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, "/public.xml", title: "Public", episodes: [("One", "/1.mp3", "audio/mpeg")])
        server.setRoute("/p1.mp3", Route(body: .bytes(Array("private".utf8)), contentType: "audio/mpeg"))
        let feed = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Private</title><item><title>One</title><guid>p1</guid>"
            + "<enclosure url=\"\(server.url("/p1.mp3").absoluteString)?token=s3cret\" type=\"audio/mpeg\"/></item></channel></rss>"
        server.setRoute("/private.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
        for path in ["/public.xml", "/private.xml"] {
            let run = await runMonsoon(["archive", server.url(path).absoluteString, "-o", "A"], in: folder.path)
            #expect(run.status == 0, "\(run.errors)")
        }
        func mode(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: folder.file(path)))?[.posixPermissions] as? Int) ?? -1 }
        #expect(mode("A/Private/feed.xml") == 0o600)
        #expect(mode("A/Public/feed.xml") == 0o644)
        #expect(try String(contentsOfFile: folder.file("A/Private/feed.xml"), encoding: .utf8).contains("token=s3cret"), "the feed as fetched")
        #expect(try !String(contentsOfFile: folder.file("A/Private/monsoon-manifest.json"), encoding: .utf8).contains("s3cret"), "the manifest redacts")
    }

    /// An archive whose downloads a running monsoon runs (it holds the home's lock) follows them
    /// to the end; it resumed nothing, and never says it did.
    @Test func aHandedOffArchiveSaysNothingWasResumed() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let gate = Gate()
        server.setRoute("/hold.mp3", Route(body: .pattern(size: 10_000, seed: 1), gate: gate))
        Self.serve(server, "/s.xml", title: "Show", episodes: [("One", "/1.mp3", "audio/mpeg"), ("Two", "/2.mp3", "audio/mpeg")])
        let runner = try MonsoonProcess(["get", "-o", "held", server.url("/hold.mp3").absoluteString], in: folder.path)
        defer { gate.open() }
        try await waitUntil("the runner's download is under way") { server.requests(for: "/hold.mp3").count == 1 }
        let archive = await runMonsoon(["archive", server.url("/s.xml").absoluteString, "-o", "A"], in: folder.path)
        #expect(archive.status == 0, "\(archive.output)\(archive.errors)")
        #expect(server.requests(for: "/1.mp3").count == 1 && server.requests(for: "/2.mp3").count == 1)
        #expect(archive.errors.contains("archived: 2 downloaded, 0 skipped (already archived), 0 failed\n"), "\(archive.errors)")
        #expect(!archive.errors.contains("resumed"), "\(archive.errors)")
        gate.open()
        #expect(try await runner.finish().status == 0)
    }
}
