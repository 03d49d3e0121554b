import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// What `sync`, `download`, `archive` and `verify` leave alone: feeds `download` does not read, a `feed.xml` that did
/// not change, an archive root that is not there, a folder a failed archive did not get, a home `verify` does not make.
extension ArchiveWholeTests {
    static func inode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int)
    }

    /// `download` reads no feed and leaves a missing `feed.xml` to `sync`; `sync` writes it only when missing or
    /// changed; an archive root that is gone (a disk not mounted) is not made anew, its episodes wait in the queue.
    @Test func downloadReadsNoFeedAndAMissingDiskIsLeftAlone() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, count: 1)
        #expect(await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "Archive"], in: folder.path).status == 0)
        let show = folder.file("Archive/Whole Show")
        try FileManager.default.removeItem(atPath: show + "/feed.xml")
        let feed = Self.serve(server, count: 2)
        #expect(await runMonsoon(["refresh"], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", "2"], in: folder.path).status == 0)
        let read = server.requests(for: "/feed.xml").count
        let downloaded = await runMonsoon(["download"], in: folder.path)
        #expect(downloaded.status == 0, "\(downloaded.output)\(downloaded.errors)")
        #expect(server.requests(for: "/feed.xml").count == read, "download reads no feed")
        #expect(folder.contents("Archive/Whole Show") == ["2024-03-01 - Talk 1.mp3", "2024-03-02 - Talk 2.mp3", "monsoon-manifest.json"])

        // The feed answers 304; the copy is missing: read once more, without conditions.
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.status == 0, "\(synced.output)\(synced.errors)")
        #expect(try String(contentsOfFile: show + "/feed.xml", encoding: .utf8) == feed)
        #expect(server.requests(for: "/feed.xml").map { $0.headers["if-none-match"] }.suffix(2) == ["\"v2\"", nil])
        // The same bytes again, without an ETag: the copy is left as it is.
        server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
        let copy = try Self.inode(show + "/feed.xml")
        #expect(await runMonsoon(["sync"], in: folder.path).status == 0)
        #expect(try Self.inode(show + "/feed.xml") == copy, "not written again")

        // The disk is not mounted: nothing is made where it was; its new episode waits in the queue.
        try FileManager.default.moveItem(atPath: folder.file("Archive"), toPath: folder.file("Away"))
        Self.serve(server, count: 3)
        #expect(await runMonsoon(["config", "set", "auto-download", "on", "--podcast", "1"], in: folder.path).status == 0)
        let unmounted = await runMonsoon(["sync"], in: folder.path)
        #expect(unmounted.status == 0, "\(unmounted.output)\(unmounted.errors)")
        #expect(unmounted.errors.contains("monsoon: Whole Show: its archive folder \(folder.file("Archive")) is not there, so nothing was written to it; "
                                          + "mount its disk or make the folder\n"), "\(unmounted.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("Archive")))
        #expect(server.requests(for: "/w3.mp3").isEmpty)
        try FileManager.default.moveItem(atPath: folder.file("Away"), toPath: folder.file("Archive"))
        let mounted = await runMonsoon(["download"], in: folder.path)
        #expect(mounted.status == 0, "\(mounted.output)\(mounted.errors)")
        #expect(try SHA256.hex(fileAt: show + "/2024-03-03 - Talk 3.mp3") == Body.pattern(size: 5_003, seed: 3).sha256Hex())
        #expect(try Self.entries(show) == ["2024-03-01 - Talk 1.mp3", "2024-03-02 - Talk 2.mp3", "2024-03-03 - Talk 3.mp3", "feed.xml"])
    }

    /// A server whose 304 is stale: the read without conditions for the missing copy brings a new episode, which
    /// `sync` queues and downloads as it does the others.
    @Test func syncQueuesWhatTheCopysReadBrings() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, count: 1)
        #expect(await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "Archive"], in: folder.path).status == 0)
        #expect(await runMonsoon(["config", "set", "auto-download", "on", "--podcast", "1"], in: folder.path).status == 0)
        let show = folder.file("Archive/Whole Show")
        try FileManager.default.removeItem(atPath: show + "/feed.xml")
        let feed = Self.serve(server, count: 2)
        server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml", etag: "\"v1\""))
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.status == 0, "\(synced.output)\(synced.errors)")
        #expect(synced.errors.contains("monsoon: queued 1 new episode\n"), "\(synced.errors)")
        #expect(try Self.entries(show) == ["2024-03-01 - Talk 1.mp3", "2024-03-02 - Talk 2.mp3", "feed.xml"])
    }

    /// A damaged manifest stops `archive -o` before the podcast gets the folder.
    @Test func aStoppedArchiveLeavesTheFolderSettingAlone() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, count: 1)
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        let before = await runMonsoon(["config", "get", "folder", "--podcast", "1"], in: folder.path).output
        try FileManager.default.createDirectory(atPath: folder.file("Archive/Whole Show"), withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: folder.file("Archive/Whole Show/monsoon-manifest.json")))
        let damaged = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "Archive"], in: folder.path)
        #expect(damaged.status == 1 && damaged.errors.contains("cannot be read as a Monsoon manifest"), "\(damaged.errors)")
        #expect(await runMonsoon(["config", "get", "folder", "--podcast", "1"], in: folder.path).output == before)
        #expect(before == "download-root\n")
    }

    /// `verify DIR` with a home that has no database: it verifies, and makes none.
    @Test func verifyMakesNoHome() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        Self.serve(server, count: 1)
        #expect(await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "Archive"], in: folder.path).status == 0)
        try FileManager.default.createDirectory(atPath: folder.file("Empty"), withIntermediateDirectories: true)
        let verified = await runMonsoon(["verify", "Archive", "--home", "Empty"], in: folder.path)
        #expect(verified.status == 0 && verified.errors == "monsoon: verified 2 files in 1 folder: all as listed\n", "\(verified.errors)")
        #expect(folder.contents("Empty") == [])
        let none = await runMonsoon(["verify", "Archive", "--home", "Nowhere"], in: folder.path)
        #expect(none.status == 0 && !FileManager.default.fileExists(atPath: folder.file("Nowhere")), "\(none.errors)")
    }
}
