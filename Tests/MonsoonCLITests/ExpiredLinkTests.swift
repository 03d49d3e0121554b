import Foundation
import MonsoonTestServer
import Synchronization
import Testing
@testable import MonsoonCLI

/// Private feeds sign their enclosure links, and the signatures expire: a link refused with 401,
/// 403 or 410 makes Monsoon read the feed again and go on from the episode's new link, its part
/// kept. Against a test server whose signed links expire an hour after the feed was served, by a
/// clock the test moves on.
@Suite struct ExpiredLinkTests {
    /// The time the signer reads: the system's, plus what the test moved it on by.
    final class MovedClock: Sendable {
        private let offset = Mutex(0.0)

        var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }

        func advance(by seconds: Double) { offset.withLock { $0 += seconds } }
    }

    /// A feed of `count` episodes (`/media/ep1.mp3`…, oldest first) whose links are signed afresh at
    /// each fetch and refused (403) an hour later by `signing`; returns the bodies. The episodes in
    /// `held` send `gateAfter` bytes, then wait for `gate`.
    static func serveSigned(_ server: TestServer, count: Int, size: Int, signing: URLSigning, held: Set<Int> = [], gate: Gate? = nil,
                            gateAfter: Int? = nil) -> [Body] {
        var bodies: [Body] = []
        var media: [URL] = []
        for index in 1...count {
            let body = Body.pattern(size: size + index, seed: UInt64(40 + index))
            bodies.append(body)
            media.append(server.url("/media/ep\(index).mp3"))
            let holds = held.contains(index)
            server.setRoute("/media/ep\(index).mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"e\(index)\"", signing: signing,
                                                          gate: holds ? gate : nil, gateAfter: holds ? gateAfter : nil))
        }
        server.setRoute("/feed.xml", Route(body: .generated { [media] in
            var items = ""
            for (index, url) in media.enumerated() {
                let link = signing.sign(url).absoluteString.replacingOccurrences(of: "&", with: "&amp;")
                items += "<item><title>Episode \(index + 1)</title><guid>g\(index + 1)</guid>"
                    + "<pubDate>0\(index + 1) Mar 2024 10:00:00 GMT</pubDate>"
                    + "<enclosure url=\"\(link)\" type=\"audio/mpeg\" length=\"\(size + index + 1)\"/></item>\n"
            }
            return Array("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Private Show</title>\n\(items)</channel></rss>".utf8)
        }, contentType: "application/rss+xml"))
        return bodies
    }

    /// The `sig` values a path was asked for with, in order.
    static func signatures(_ server: TestServer, _ path: String) -> [String] {
        server.requests(for: path).map { request in
            String(request.path.split(separator: "&").first { $0.hasPrefix("sig=") }?.dropFirst(4) ?? "none")
        }
    }

    /// The signed links of the later episodes expire before their turn comes: each is refused
    /// once, the feed is read again, and it goes on from its new link. Every file is whole, and
    /// no episode was fetched twice.
    @Test func anArchiveOutlivesItsSignedLinks() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // 2 at a time: the first two are held part-way while the clock passes the links' expiry,
        // so every later episode starts with a link that has expired.
        let clock = MovedClock()
        let gate = Gate()
        defer { gate.open() }
        let bodies = Self.serveSigned(server, count: 6, size: 240_000, signing: URLSigning(lifetime: 3600) { clock.now }, held: [1, 2], gate: gate, gateAfter: 100_000)
        let feed = server.url("/feed.xml").absoluteString
        let run = try MonsoonProcess(["archive", feed, "-o", "A", "-j", "2"], in: folder.path)
        // Both first answers accepted and under way (the feed and 403 pages are a few kilobytes).
        try await waitUntil("the first two episodes under way") { server.bodyBytesSent >= 200_000 }
        #expect(server.requests(for: "/feed.xml").count == 1)
        clock.advance(by: 7200)
        gate.open()
        let result = try await run.finish(seconds: 120)
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(result.errors.contains("archived: 6 downloaded, 0 skipped (already archived), 0 failed"), "\(result.errors)")
        #expect(!result.errors.contains(" failed: "), "a renewed link is no failure: \(result.errors)")
        for (index, body) in bodies.enumerated() {
            #expect(try SHA256.hex(fileAt: folder.file("A/Private Show/2024-03-0\(index + 1) - Episode \(index + 1).mp3")) == body.sha256Hex())
        }
        // The feed was read again, and the refused episodes went on from their new links.
        let fetches = server.requests(for: "/feed.xml").count
        #expect(fetches >= 2 && fetches <= 6, "\(fetches) fetches of the feed")
        let renewed = (1...6).filter { Set(Self.signatures(server, "/media/ep\($0).mp3")).count > 1 }
        #expect(renewed.contains(6), "the last episode's first link had expired: \((1...6).map { Self.signatures(server, "/media/ep\($0).mp3") })")
        #expect(!renewed.contains(1) && !renewed.contains(2), "the first two went on from their first links")
        // Nothing fetched twice: the server sent the episodes once, the feeds and the small 403 pages.
        let payload = bodies.reduce(0) { $0 + $1.count }
        #expect(server.bodyBytesSent < payload + 50_000, "\(server.bodyBytesSent) bytes sent for \(payload)")
    }

    /// Killed halfway, resumed after its link expired: the refused link sends Monsoon back to the
    /// feed, and the part goes on from the new link with Range (and If-Range): only the rest is sent.
    @Test func aDownloadResumedAfterItsLinkExpiredGoesOnFromThePart() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let size = 1_000_000
        let clock = MovedClock()
        let signing = URLSigning(lifetime: 3600) { clock.now }
        let gate = Gate()
        defer { gate.open() }
        let bodies = Self.serveSigned(server, count: 1, size: size - 1, signing: signing, held: [1], gate: gate, gateAfter: 200_000)
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", "--podcast", "1", "--all"], in: folder.path).status == 0)
        let part = folder.file("A/Private Show/2024-03-01 - Episode 1.mp3.part")
        let first = try MonsoonProcess(["download", "-o", "A"], in: folder.path)
        try await waitUntil("a part of 200 KB") { fileSize(part) >= 200_000 }
        kill(first.process.processIdentifier, SIGKILL)
        _ = try await first.finish()
        let partSize = fileSize(part)
        #expect(partSize >= 200_000 && partSize < size)
        // The link the part came from expires; meanwhile the server no longer holds the answer.
        let link = try #require(server.requests(for: "/media/ep1.mp3").last?.path)
        let expires = try #require(link.split(separator: "?").last?.split(separator: "&").first { $0.hasPrefix("expires=") }.flatMap { Double($0.dropFirst(8)) })
        clock.advance(by: max(0, expires - clock.now.timeIntervalSince1970) + 1)
        server.setRoute("/media/ep1.mp3", Route(body: bodies[0], contentType: "audio/mpeg", etag: "\"e1\"", signing: signing))
        server.resetStatistics()

        let second = await runMonsoon(["download", "-o", "A"], in: folder.path)
        let asked = server.requests(for: "/media/ep1.mp3")
        // What the server saw first, so a failure says how far the renewal got.
        #expect(second.status == 0, "\(second.output)\(second.errors)\(asked.map(\.path)), feed read \(server.requests(for: "/feed.xml").count) times")
        let file = folder.file("A/Private Show/2024-03-01 - Episode 1.mp3")
        // Seen once under load on a fresh clone: a second run silent, exit 0, with no file. What the queue says then tells why.
        let queue = FileManager.default.fileExists(atPath: file) ? "" : await runMonsoon(["downloads", "--json"], in: folder.path).output
        #expect(server.requests(for: "/feed.xml").count == 1, "the feed is read again once: \(second.output)\(second.errors)\(queue)")
        #expect(try SHA256.hex(fileAt: file) == bodies[0].sha256Hex(), "\(queue)")
        #expect(asked.count == 2 && Set(Self.signatures(server, "/media/ep1.mp3")).count == 2, "\(asked.map(\.path))")
        #expect(asked.first?.path == link, "the expired link first")
        #expect(asked.last?.header("Range") == "bytes=\(partSize)-" && asked.last?.header("If-Range") == "\"e1\"", "\(asked.map(\.headers))")
        #expect(server.bodyBytesSent < size - partSize + 20_000, "only the rest was sent: \(server.bodyBytesSent)")
    }

    /// A link still refused after the feed was read again: the download fails, saying so, and the
    /// feed was read once more only, for all of the podcast's refused episodes together.
    @Test func aLinkStillRefusedAfterReadingTheFeedFailsAndSaysWhy() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        var items = ""
        for index in 1...3 {
            server.setRoute("/private/ep\(index).mp3", Route.html(status: 403, "<html>Forbidden</html>"))
            items += "<item><title>Episode \(index)</title><guid>g\(index)</guid><pubDate>0\(index) Mar 2024 10:00:00 GMT</pubDate>"
                + "<enclosure url=\"\(server.url("/private/ep\(index).mp3?token=abc").absoluteString)\" type=\"audio/mpeg\" length=\"1000\"/></item>"
        }
        let text = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Locked Show</title>\(items)</channel></rss>"
        server.setRoute("/feed.xml", Route(body: .bytes(Array(text.utf8)), contentType: "application/rss+xml"))
        let run = try await MonsoonProcess(["archive", server.url("/feed.xml").absoluteString, "-o", "A", "-j", "3"], in: folder.path).finish(seconds: 60)
        #expect(run.status == 1, "\(run.output)\(run.errors)")
        let failures = run.errors.split(separator: "\n").filter { $0.hasPrefix("monsoon: e") && $0.contains(" failed: ") }
        #expect(failures.count == 3, "\(run.errors)")
        for line in failures {
            #expect(line.contains(": the server answered 403 Forbidden: the link has likely expired, and the feed, read again, gives no new one; "
                                  + "check that the feed still gives you access, then run 'monsoon retry e"), "\(line)")
            #expect(!line.contains("token=abc"), "credentials are redacted")
        }
        #expect(server.requests(for: "/feed.xml").count == 2, "read once more, for the three together")
        for index in 1...3 { #expect(server.requests(for: "/private/ep\(index).mp3").count == 1) }
        // The reason stays with the download and its episode.
        let downloads = await runMonsoon(["downloads", "--json"], in: folder.path)
        #expect(downloads.output.components(separatedBy: "gives no new one").count == 4, "\(downloads.output)")
        let episodes = await runMonsoon(["episodes", "1", "--json"], in: folder.path)
        #expect(episodes.output.components(separatedBy: "gives no new one").count == 4, "\(episodes.output)")
    }
}
