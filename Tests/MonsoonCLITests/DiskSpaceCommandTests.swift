import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// Disks that fill: the reserve holds during transfers, only what fits starts, and what does not
/// is left queued with the reason and exit status 3. Small tmpfs disks (mounting needs root with
/// CAP_SYS_ADMIN, as `make test` has in CI; elsewhere the suite is skipped and says why).
@Suite(.enabled(if: SmallDisk.canMount, "mounting a tmpfs is not permitted here (it needs root with CAP_SYS_ADMIN): disk-space tests skipped"))
struct DiskSpaceCommandTests {
    /// Five 1.5 MiB files into a 5 MiB disk, five at once: three fit and are downloaded, two are
    /// left queued with the reason (exit 3). The same command again says so again; once the disk
    /// has room, it finishes them.
    @Test func getDownloadsWhatFitsAndSaysWhyTheRestWaits() async throws {
        let server = try TestServer()
        let folder = Folder()
        let disk = try SmallDisk(at: folder.file("disk"), megabytes: 5)
        defer { disk.unmount(); folder.remove(); server.stop() }
        let body = Body.pattern(size: 1_536 << 10, seed: 3)
        // Each answer held after its first bytes until two are refused: three run at once, and the
        // others must fit beside what those three still need.
        let gate = Gate()
        defer { gate.open() }
        for index in 1...5 { server.setRoute("/e\(index).mp3", Route(body: body, contentType: "audio/mpeg", gate: gate, gateAfter: 16 << 10)) }
        let urls = (1...5).map { server.url("/e\($0).mp3").absoluteString }
        let arguments = ["get", "-j", "5", "--min-free", "0", "-o", disk.path] + urls
        let waiting = { (text: String) in text.split(separator: "\n").filter { $0.contains(" waiting for disk space: not enough disk space on the disk holding \(disk.path): ") } }

        let errors = TextOutput.capturing()
        async let run = runMonsoon(arguments, in: folder.path, errors: errors)
        do {
            defer { gate.open() }   // when the wait fails too: the run, awaited as the test ends, must end
            try await waitUntil("two downloads refused") { waiting(errors.text).count == 2 }
        }
        let first = await run
        #expect(first.status == 3, "\(first.errors)")
        let written = first.output.split(separator: "\n")
        #expect(written.count == 3, "\(first.output)")
        #expect(waiting(first.errors).count == 2, "\(first.errors)")
        #expect(first.errors.contains("monsoon: 3 of 5 downloaded, 2 left queued for lack of disk space ("), "\(first.errors)")
        let done = (1...5).filter { FileManager.default.fileExists(atPath: disk.file("e\($0).mp3")) }
        #expect(done.count == 3)
        for index in done { #expect(try SHA256.hex(fileAt: disk.file("e\(index).mp3")) == body.sha256Hex()) }

        // The queue says why they wait.
        let listing = await runMonsoon(["downloads", "--status", "queued"], in: folder.path)
        #expect(listing.output.components(separatedBy: "error: not enough disk space on the disk holding \(disk.path)").count == 3, "\(listing.output)")

        let again = await runMonsoon(arguments, in: folder.path)
        #expect(again.status == 3, "\(again.errors)")
        #expect(again.errors.contains("monsoon: 5 of 5 downloaded") == false)
        #expect(again.errors.contains("3 already there, 2 left queued for lack of disk space"), "\(again.errors)")

        try disk.resize(megabytes: 10)
        let last = await runMonsoon(arguments, in: folder.path)
        #expect(last.status == 0, "\(last.errors)")
        for index in 1...5 { #expect(try SHA256.hex(fileAt: disk.file("e\(index).mp3")) == body.sha256Hex()) }
    }

    /// An enclosure and artwork with no length that never end: the episode stops before the
    /// reserve (part kept, exit 3, the disk's reserve still free), the artwork at its cap.
    @Test func archiveStopsAnEndlessBodyAtTheReserveAndArtworkAtItsCap() async throws {
        let server = try TestServer()
        let folder = Folder()
        let disk = try SmallDisk(at: folder.file("disk"), megabytes: 96)
        defer { disk.unmount(); folder.remove(); server.stop() }
        // The episode held part-way until the artwork has reached its cap, so that it reaches the reserve after.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/endless.mp3", Route(body: .pattern(size: 1 << 30, seed: 1), contentType: "audio/mpeg", sendsContentLength: false,
                                              gate: gate, gateAfter: 1 << 20))
        server.setRoute("/cover.jpg", Route(body: .pattern(size: 1 << 30, seed: 2), contentType: "image/jpeg", sendsContentLength: false))
        let feed = """
            <?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Endless</title>
            <itunes:image href="\(server.url("/cover.jpg").absoluteString)"/>
            <item><title>Forever</title><guid>f</guid><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
            <enclosure url="\(server.url("/endless.mp3").absoluteString)" type="audio/mpeg"/></item></channel></rss>
            """
        server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
        let archive = try MonsoonProcess(["archive", server.url("/feed.xml").absoluteString, "-o", disk.path, "--with-artwork", "--min-free", "8MiB"],
                                         in: folder.path)
        try await waitUntil("the artwork stopped at its cap") { archive.errorsSoFar.contains("monsoon: a1 failed: ") }
        gate.open()
        let result = try await archive.finish()
        #expect(result.status == 3, "\(result.errors)")
        #expect(result.output.contains("waiting e1 for disk space: not enough disk space on the disk holding \(disk.path)/Endless: "), "\(result.output)")
        #expect(result.errors.contains("monsoon: a1 failed: ") && result.errors.contains("the body is larger than this download's limit of 20 MiB (the cap for artwork); stopped at 20 MiB"),
                "\(result.errors)")
        #expect(result.errors.contains("monsoon: archived: 0 downloaded, 0 skipped (already archived), 1 failed\nmonsoon: 1 left queued for lack of disk space\n"), "\(result.errors)")
        let part = (try? FileManager.default.attributesOfItem(atPath: disk.file("Endless/2024-01-01 - Forever.mp3.part"))[.size] as? Int) ?? 0
        #expect(part > 10 << 20, "the bytes received are kept: \(part)")
        // The downloads stopped at the reserve; the feed snapshot and the manifest (a page each)
        // are written after them.
        #expect(disk.freeBytes >= (8 << 20) - (64 << 10), "the reserve is still free: \(disk.freeBytes)")
    }

    /// An episode that grows far past the length its feed declares stops at twice that plus 64 MiB.
    @Test func anEpisodeFarLargerThanItsFeedDeclaresStops() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/live.mp3", Route(body: .pattern(size: 1 << 30, seed: 4), contentType: "audio/mpeg", sendsContentLength: false))
        let feed = """
            <?xml version="1.0"?><rss version="2.0"><channel><title>Live</title>
            <item><title>Stream</title><guid>s</guid><enclosure url="\(server.url("/live.mp3").absoluteString)" type="audio/mpeg" length="2097152"/></item>
            </channel></rss>
            """
        server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
        let result = try await MonsoonProcess(["archive", server.url("/feed.xml").absoluteString, "-o", "A"], in: folder.path).finish()
        #expect(result.status == 1, "\(result.errors)")
        #expect(result.errors.contains("the body is larger than this download's limit of 68 MiB (twice the 2.0 MiB its feed declares, plus 64 MiB); stopped at 68 MiB"),
                "\(result.errors)")
    }

    /// A read-only disk is no full disk: each download fails saying so, at once.
    @Test func aReadOnlyFolderIsSaidSoNotTakenForAFullDisk() async throws {
        let server = try TestServer()
        let folder = Folder()
        let disk = try SmallDisk(at: folder.file("disk"), megabytes: 4)
        defer { disk.unmount(); folder.remove(); server.stop() }
        try FileManager.default.createDirectory(atPath: disk.file("out"), withIntermediateDirectories: true)
        try disk.remountReadOnly()
        server.setRoute("/a.mp3", Route(body: .bytes([1, 2, 3]), contentType: "audio/mpeg"))
        let run = await runMonsoon(["get", "-o", disk.file("out"), server.url("/a.mp3").absoluteString], in: folder.path)
        #expect(run.status == 1, "\(run.errors)")
        #expect(run.errors.contains("failed: \(server.url("/a.mp3").absoluteString): the disk holding \(disk.file("out")) is mounted read-only: "
                                    + "nothing can be written there; download to another folder (-o), or remount it read-write"), "\(run.errors)")
        #expect(!run.errors.contains("disk space"), "\(run.errors)")
        #expect(server.requests(for: "/a.mp3").isEmpty)
    }
}
