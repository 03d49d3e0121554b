import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// Episodes downloaded through the queue: order, names, states, space, storage and cleanup,
/// against the test server, with a real database in a temporary home.
@Suite struct EpisodeCommandTests {
    struct Item {
        var title: String
        var path: String
        var day: Int
        var length: Int
        var type = "audio/mpeg"
    }

    /// A feed whose enclosures are on `server`, newest item first.
    static func feed(_ server: TestServer, title: String = "Test Show", items: [Item]) -> Route {
        var text = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>\(title)</title>\n"
        for item in items.sorted(by: { $0.day > $1.day }) {
            text += "<item><title>\(item.title)</title><guid>\(item.path)</guid><pubDate>\(String(format: "%02d", item.day)) Jan 2024 10:00:00 GMT</pubDate>"
            text += "<enclosure url=\"\(server.url(item.path).absoluteString)\" type=\"\(item.type)\" length=\"\(item.length)\"/></item>\n"
        }
        return Route(body: .bytes(Array((text + "</channel></rss>\n").utf8)), contentType: "application/rss+xml")
    }

    /// Subscribes a home in `folder` to a feed of `count` episodes (bodies served by `server`)
    /// and sets the download root to `folder/Podcasts`. Episode `held` (1 is the oldest) sends
    /// `gateAfter` bytes, then waits for `gate`.
    static func library(_ server: TestServer, in folder: Folder, count: Int, size: Int = 30_000, held: Int? = nil, gate: Gate? = nil,
                        gateAfter: Int? = nil) async throws -> [Body] {
        var items: [Item] = []
        var bodies: [Body] = []
        for index in 1...count {
            let body = Body.pattern(size: size, seed: UInt64(index))
            bodies.append(body)
            let holds = index == held
            server.setRoute("/ep\(index).mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"e\(index)\"",
                                                    gate: holds ? gate : nil, gateAfter: holds ? gateAfter : nil))
            items.append(Item(title: "Episode \(index)", path: "/ep\(index).mp3", day: index, length: size))
        }
        server.setRoute("/feed.xml", feed(server, items: items))
        let added = await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path)
        #expect(added.status == 0, "\(added.errors)")
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("Podcasts")], in: folder.path).status == 0)
        return bodies
    }

    static func episodes(in folder: Folder) async throws -> [[String: Any]] {
        let listing = await runMonsoon(["episodes", "1", "--json"], in: folder.path)
        return try #require(try JSONSerialization.jsonObject(with: Data(listing.output.utf8)) as? [[String: Any]])
    }

    @Test func theQueueIsDownloadedInTheUsersOrderUnderTemplatedNames() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = try await Self.library(server, in: folder, count: 4)
        // Episode ids follow the feed order (newest first): ids 1…4 are episodes 4…1.
        let queued = await runMonsoon(["queue", "add", "--podcast", "Test", "--all"], in: folder.path)
        #expect(queued.output.hasPrefix("queued 4 episodes"), "\(queued.output)\(queued.errors)")
        #expect(await runMonsoon(["queue", "move", "1", "2"], in: folder.path).status == 0)
        let listing = await runMonsoon(["queue", "--json"], in: folder.path)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(listing.output.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["title"] as? String } == ["Episode 1", "Episode 4", "Episode 2", "Episode 3"], "oldest first, then moved")
        #expect(rows.map { $0["position"] as? Int } == [1, 2, 3, 4])

        let run = await runMonsoon(["download", "-j", "1"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(server.requests.filter { $0.path.hasPrefix("/ep") }.map(\.path) == ["/ep1.mp3", "/ep4.mp3", "/ep2.mp3", "/ep3.mp3"])
        for index in 1...4 {
            let path = folder.file("Podcasts/Test Show/2024-01-\(String(format: "%02d", index)) - Episode \(index).mp3")
            #expect(try SHA256.hex(fileAt: path) == bodies[index - 1].sha256Hex())
        }
        let episodes = try await Self.episodes(in: folder)
        #expect(episodes.allSatisfy { $0["downloadState"] as? String == "downloaded" && $0["bytesOnDisk"] as? Int == 30_000 })
        #expect(episodes.allSatisfy { ($0["fileName"] as? String)?.hasPrefix(folder.file("Podcasts/Test Show/")) == true })
        #expect(await runMonsoon(["queue"], in: folder.path).output.hasPrefix("the queue is empty;"))
        // Nothing is fetched twice: a downloaded episode is not queued again.
        #expect(await runMonsoon(["queue", "add", "1"], in: folder.path).output.hasPrefix("queued 0 episodes; 1 already queued or downloaded"))
    }

    @Test func reorderingDuringARunChangesWhatStartsNext() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // The first held part-way until the queue has been reordered.
        let gate = Gate()
        defer { gate.open() }
        _ = try await Self.library(server, in: folder, count: 4, size: 200_000, held: 1, gate: gate, gateAfter: 50_000)
        #expect(await runMonsoon(["queue", "add", "--podcast", "1", "--all"], in: folder.path).status == 0)
        let runner = try MonsoonProcess(["download", "-j", "1"], in: folder.path)
        defer { runner.process.terminate() }
        try await waitUntil("the first episode under way") { !server.requests(for: "/ep1.mp3").isEmpty }
        // Episode id 1 is the newest (ep4): to the front, while ep1 downloads.
        let moved = await runMonsoon(["queue", "move", "1", "1"], in: folder.path)
        #expect(moved.status == 0, "\(moved.errors)")
        gate.open()
        let done = try await runner.finish()
        #expect(done.status == 0, "\(done.errors)")
        #expect(server.requests.filter { $0.path.hasPrefix("/ep") }.map(\.path) == ["/ep1.mp3", "/ep4.mp3", "/ep2.mp3", "/ep3.mp3"])
    }

    @Test func failuresCarryTheirReasonAndRetryTakesAnEpisodeID() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = try await Self.library(server, in: folder, count: 2)
        server.setRoute("/ep1.mp3", Route.html(status: 404, "<html>gone</html>"))
        server.setRoute("/ep2.mp3", Route.html(status: 200, "<html>please log in</html>"))
        #expect(await runMonsoon(["queue", "add", "1", "2"], in: folder.path).status == 0)
        let run = await runMonsoon(["download", "--retries", "0"], in: folder.path)
        #expect(run.status == 1)
        let episodes = try await Self.episodes(in: folder)
        let byTitle = Dictionary(uniqueKeysWithValues: episodes.map { ($0["title"] as? String ?? "", $0) })
        #expect(byTitle["Episode 1"]?["downloadState"] as? String == "failed")
        #expect((byTitle["Episode 1"]?["downloadError"] as? String)?.contains("404") == true)
        #expect(byTitle["Episode 2"]?["downloadState"] as? String == "failed")
        #expect((byTitle["Episode 2"]?["downloadError"] as? String)?.contains("web page") == true, "\(String(describing: byTitle["Episode 2"]?["downloadError"]))")
        #expect(!FileManager.default.fileExists(atPath: folder.file("Podcasts/Test Show")) || folder.contents("Podcasts/Test Show").isEmpty,
                "no error page where an episode belongs")
        let queue = await runMonsoon(["queue"], in: folder.path)
        #expect(queue.output.contains("failed") && queue.output.contains("error: the server answered 404"))

        server.setRoute("/ep2.mp3", Route(body: .pattern(size: 1_000, seed: 2), contentType: "audio/mpeg"))
        let retried = await runMonsoon(["retry", "1"], in: folder.path)   // episode 1 is the newest: ep2
        #expect(retried.status == 0, "\(retried.errors)")
        #expect(await runMonsoon(["download"], in: folder.path).status == 0)
        #expect(try await Self.episodes(in: folder).first { $0["id"] as? Int == 1 }?["downloadState"] as? String == "downloaded")
        // Removing an episode's download by its id takes it out of the queue.
        let removed = await runMonsoon(["remove", "2"], in: folder.path)
        #expect(removed.status == 0, "\(removed.errors)")
        #expect(try await Self.episodes(in: folder).first { $0["id"] as? Int == 2 }?["downloadState"] as? String == "none")
        #expect(await runMonsoon(["queue"], in: folder.path).output.hasPrefix("the queue is empty;"))
        let unknown = await runMonsoon(["pause", "77"], in: folder.path)
        #expect(unknown.status == 1 && unknown.errors.contains("episode 77 has no download"))
    }

    @Test func aRestartHalfwayResumesTheRestInOrder() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // The second held part-way, where the run is killed.
        let gate = Gate()
        defer { gate.open() }
        let bodies = try await Self.library(server, in: folder, count: 3, size: 600_000, held: 2, gate: gate, gateAfter: 100_000)
        #expect(await runMonsoon(["queue", "add", "--podcast", "1", "--all"], in: folder.path).status == 0)
        let first = try MonsoonProcess(["download", "-j", "1"], in: folder.path)
        // Under way with bytes in its part: a part just made, still empty, would be started over.
        try await waitUntil("the second episode under way") {
            (LocalFile.size(at: folder.file("Podcasts/Test Show/2024-01-02 - Episode 2.mp3.part")) ?? 0) >= 100_000
        }
        kill(first.process.processIdentifier, SIGKILL)
        _ = try await first.finish()
        gate.open()
        let second = try await MonsoonProcess(["download", "-j", "1"], in: folder.path).finish()
        #expect(second.status == 0, "\(second.errors)")
        // A finished episode is not fetched again. (Killed between its last byte and its rename,
        // its whole part is confirmed with one request for the bytes past its end: no body.)
        let ep1 = server.requests(for: "/ep1.mp3")
        #expect(ep1.count == 1 || (ep1.count == 2 && ep1[1].header("Range") == "bytes=600000-"), "\(ep1.map { $0.header("Range") ?? "-" })")
        #expect(server.requests(for: "/ep2.mp3").last?.header("Range")?.hasPrefix("bytes=") == true, "the interrupted one resumes")
        #expect(server.requests(for: "/ep3.mp3").count == 1)
        for index in 1...3 {
            #expect(try SHA256.hex(fileAt: folder.file("Podcasts/Test Show/2024-01-0\(index) - Episode \(index).mp3")) == bodies[index - 1].sha256Hex())
        }
    }

    @Test func aQueueThatDoesNotFitSaysSoAndDownloadsWhatFits() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/small1.mp3", Route(body: .pattern(size: 1_000, seed: 1), contentType: "audio/mpeg"))
        server.setRoute("/huge.mp3", Route(body: .pattern(size: 1_000, seed: 2), contentType: "audio/mpeg"))
        server.setRoute("/small2.mp3", Route(body: .pattern(size: 1_000, seed: 3), contentType: "audio/mpeg"))
        server.setRoute("/feed.xml", Self.feed(server, items: [
            Item(title: "Small one", path: "/small1.mp3", day: 1, length: 1_000),
            Item(title: "Huge", path: "/huge.mp3", day: 2, length: 1_000_000_000_000_000),
            Item(title: "Small two", path: "/small2.mp3", day: 3, length: 1_000),
        ]))
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", "--podcast", "1", "--all"], in: folder.path).status == 0)
        let run = await runMonsoon(["download", "-o", folder.file("out")], in: folder.path)
        #expect(run.status == 3)
        #expect(run.errors.hasPrefix("monsoon: not enough disk space for the whole queue: it needs "), "\(run.errors)")
        #expect(run.errors.contains("downloading the 2 of 3 that fit, in order, and leaving the rest queued"))
        #expect(server.requests(for: "/huge.mp3").isEmpty)
        #expect(Set(folder.contents("out/Test Show")) == ["2024-01-01 - Small one.mp3", "2024-01-03 - Small two.mp3"])
        let queue = await runMonsoon(["queue", "--json"], in: folder.path)
        #expect(queue.output.contains("\"title\": \"Huge\"") && queue.output.contains("\"state\": \"queued\""))
    }

    @Test func storageDeleteAndUnsubscribeWorkOnTheFiles() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = try await Self.library(server, in: folder, count: 3, size: 10_000)
        #expect(await runMonsoon(["queue", "add", "--podcast", "1", "--all"], in: folder.path).status == 0)
        #expect(await runMonsoon(["download"], in: folder.path).status == 0)

        let storage = await runMonsoon(["storage", "--json"], in: folder.path)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(storage.output.utf8)) as? [String: Any])
        #expect(report["totalBytes"] as? Int == Self.duBytes(folder.file("Podcasts")))
        #expect(report["totalBytes"] as? Int == 30_000)
        #expect(await runMonsoon(["storage"], in: folder.path).output.contains("total 29 KiB (30000 bytes) in 3 files"))

        let deleted = await runMonsoon(["delete", "3"], in: folder.path)
        #expect(deleted.output == "deleted 1 episode download, freeing 9.8 KiB\n", "\(deleted.output)\(deleted.errors)")
        #expect(Self.duBytes(folder.file("Podcasts")) == 20_000)
        #expect(try await Self.episodes(in: folder).first { $0["id"] as? Int == 3 }?["downloadState"] as? String == "none")

        // Played, with auto-delete on: the download goes.
        #expect(await runMonsoon(["config", "set", "auto-delete-played", "on"], in: folder.path).status == 0)
        #expect(await runMonsoon(["played", "2"], in: folder.path).output.contains("deleted 1 download"))
        #expect(Self.duBytes(folder.file("Podcasts")) == 10_000)

        let gone = await runMonsoon(["unsubscribe", "--delete-files", "1"], in: folder.path)
        #expect(gone.status == 0, "\(gone.errors)")
        #expect(gone.output.contains("(1 file deleted"))
        #expect(folder.contents("Podcasts/Test Show").isEmpty)
        #expect(await runMonsoon(["downloads"], in: folder.path).output.hasPrefix("the queue is empty;"), "its downloads are forgotten too")
    }

    @Test func keepLatestKeepsOnlyTheNewestDownloads() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = try await Self.library(server, in: folder, count: 4, size: 5_000)
        #expect(await runMonsoon(["config", "set", "keep-latest", "2", "--podcast", "Test Show"], in: folder.path).status == 0)
        #expect(await runMonsoon(["config", "get", "keep-latest", "--podcast", "1"], in: folder.path).output == "2\n")
        #expect(await runMonsoon(["config", "get", "keep-latest"], in: folder.path).output == "off\n")
        #expect(await runMonsoon(["queue", "add", "--podcast", "1", "--all"], in: folder.path).status == 0)
        let run = await runMonsoon(["download", "-j", "1"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(folder.contents("Podcasts/Test Show") == ["2024-01-03 - Episode 3.mp3", "2024-01-04 - Episode 4.mp3"])
    }

    @Test func badSettingsAndTemplatesAreRefused() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let unknown = await runMonsoon(["config", "set", "concurrncy", "3"], in: folder.path)
        #expect(unknown.status == 2 && unknown.errors.hasPrefix("monsoon: the value 'concurrncy' is invalid for '<key>': expected one of 'concurrency', "), "\(unknown.errors)")
        #expect(unknown.errors.contains("'; did you mean 'concurrency'?\n"), "\(unknown.errors)")
        let bad = await runMonsoon(["config", "set", "template", "{podcast}/{bogus}.{ext}"], in: folder.path)
        #expect(bad.status == 2 && bad.errors.contains("unknown variable {bogus}"))
        let size = await runMonsoon(["config", "set", "disk-reserve", "lots"], in: folder.path)
        #expect(size.status == 2 && size.errors.contains("'lots' is not a valid disk-reserve"))
        #expect(await runMonsoon(["config", "set", "disk-reserve", "2GiB"], in: folder.path).output == "disk-reserve = 2GiB\n")
        let perPodcast = await runMonsoon(["config", "set", "retries", "3", "--podcast", "1"], in: folder.path)
        #expect(perPodcast.status == 2 && perPodcast.errors.contains("retries has no per-podcast value"))
        let list = await runMonsoon(["config"], in: folder.path)
        #expect(list.output.contains("disk-reserve         2GiB\n") && list.output.contains("template             {podcast}/{date} - {title}.{ext}  (default)"))
    }

    @Test func hostileTitlesLandInsideTheRoot() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a.mp3", Route(body: .bytes([1]), contentType: "audio/mpeg"))
        server.setRoute("/b", Route(body: .bytes([2]), contentType: "audio/mpeg"))
        server.setRoute("/feed.xml", Self.feed(server, title: "../../..", items: [
            Item(title: "../../etc/passwd", path: "/a.mp3", day: 1, length: 1),
            Item(title: "\(String(repeating: "x", count: 1_000))", path: "/b", day: 2, length: 1),
        ]))
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", "--podcast", "1", "--all"], in: folder.path).status == 0)
        let run = await runMonsoon(["download", "-o", folder.file("root")], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        let files = try #require(FileManager.default.subpaths(atPath: folder.file("root"))).filter { !$0.hasSuffix("/") }
        #expect(files.count == 3, "\(files)")   // one folder, two files
        for file in files {
            #expect(!file.split(separator: "/").contains("..") && file.split(separator: "/").allSatisfy { $0.utf8.count <= 255 }, "\(file)")
        }
        #expect(files.contains { $0.hasSuffix(".mp3") && $0.contains("etc-passwd") })
        #expect(files.contains { $0.hasSuffix("xxx") == false && $0.utf8.count > 200 }, "the long title is cut, the extension comes from the media type")
    }

    /// A feed cannot make Monsoon read a local file or speak another protocol: enclosures with
    /// other schemes, and a redirect to one, fail with the reason and leave nothing on disk.
    @Test func enclosuresWithOtherSchemesAreRefused() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/good.mp3", Route(body: .bytes([1, 2, 3]), contentType: "audio/mpeg"))
        server.setRoute("/moved.mp3", Route(body: .bytes([]), faults: [.redirect(to: "ftp://127.0.0.1:\(server.port)/x.mp3")]))
        let enclosures = [server.url("/good.mp3").absoluteString, "file:///etc/passwd", "ftp://127.0.0.1:\(server.port)/x.mp3",
                          "gopher://127.0.0.1:\(server.port)/1x", "data:audio/mpeg;base64,SUQzAwAAAAAAAA==", server.url("/moved.mp3").absoluteString]
        var text = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Schemes</title>\n"
        for (index, url) in enclosures.enumerated() {
            text += "<item><title>E\(index)</title><guid>g\(index)</guid><enclosure url=\"\(url)\" type=\"audio/mpeg\" length=\"3\"/></item>\n"
        }
        server.setRoute("/feed.xml", Route(body: .bytes(Array((text + "</channel></rss>").utf8)), contentType: "application/rss+xml"))
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        let queued = await runMonsoon(["queue", "add", "--podcast", "1", "--all"], in: folder.path)
        let run = await runMonsoon(["download", "--retries", "0", "-o", folder.file("root")], in: folder.path)
        #expect(run.status == 1, "\(queued.errors) \(run.errors)")
        let files = FileManager.default.subpaths(atPath: folder.file("root")) ?? []
        #expect(files.filter { $0.hasSuffix(".mp3") }.count == 1, "\(files)")
        let episodes = try await Self.episodes(in: folder)
        for episode in episodes where episode["title"] as? String != "E0" {
            let error = episode["downloadError"] as? String ?? ""
            #expect(episode["downloadState"] as? String == "failed", "\(episode)")
            let expected = episode["title"] as? String == "E5"
                ? "refused a URL or redirect with a scheme other than http or https"
                : "only http and https URLs can be downloaded; this one is \((episode["url"] as? String ?? "").prefix { $0 != ":" }):"
            #expect(error.hasPrefix(expected), "\(episode)")
        }
        #expect(Set(server.requests.map(\.path)) == ["/feed.xml", "/good.mp3", "/moved.mp3"], "nothing else was asked for")
    }

    /// What `du -b` counts for the files under `path`.
    static func duBytes(_ path: String) -> Int {
        let enumerator = FileManager.default.enumerator(atPath: path)
        var total = 0
        while let name = enumerator?.nextObject() as? String {
            let full = (path as NSString).appendingPathComponent(name)
            var info = stat()
            if lstat(full, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { total += Int(info.st_size) }
        }
        return total
    }
}
