import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing

/// The built `monsoon` binary: signals, exit statuses and a rerun that resumes.
@Suite struct GetProcessTests {
    @Test func ctrlCKeepsThePartAndARerunResumesWithRange() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let size = 2 << 20
        let body = Body.pattern(size: size, seed: 42)
        // Held part-way, where Ctrl-C stops it.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/show/episode.mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"e1\"",
                                                    contentDisposition: "attachment; filename=\"Episode 1.mp3\"", gate: gate, gateAfter: 300_000))
        let url = server.url("/show/episode.mp3").absoluteString

        let first = try MonsoonProcess(["get", "-o", "out", url], in: folder.path)
        try await waitUntil("some bytes in the part file") { fileSize(folder.file("out/Episode 1.mp3.part")) > 200_000 }
        first.interrupt()
        let stopped = try await first.finish()
        #expect(stopped.status == 130)
        #expect(stopped.errors.contains("interrupted"))
        let kept = fileSize(folder.file("out/Episode 1.mp3.part"))
        #expect(kept > 200_000 && kept < size)
        #expect(folder.contents("out") == ["Episode 1.mp3.part"], "nothing at the destination yet")

        server.setRoute("/show/episode.mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"e1\"",
                                                    contentDisposition: "attachment; filename=\"Episode 1.mp3\""))
        let second = try MonsoonProcess(["get", "-o", "out", url], in: folder.path)
        let done = try await second.finish()
        #expect(done.status == 0, "\(done.errors)")
        #expect(folder.contents("out") == ["Episode 1.mp3"])
        #expect(try SHA256.hex(fileAt: folder.file("out/Episode 1.mp3")) == body.sha256Hex())
        let requests = server.requests(for: "/show/episode.mp3")
        #expect(requests.count == 2)
        let range = try #require(requests.last?.header("Range"))
        #expect(range.hasPrefix("bytes=") && range != "bytes=0-")
        let offset = Int(range.dropFirst(6).dropLast()) ?? 0
        #expect(offset >= kept - 1_000_000 && offset > 0, "resumed from the kept part")
        #expect(requests.last?.header("If-Range") == "\"e1\"")
        #expect(server.bodyBytesSent <= size + 256 * 1024, "the rerun fetched only the rest")
    }

    /// Without a usable libcurl nothing can be downloaded: one line says why and what to do, the
    /// status is 1 ("another error", not a crash's), and a run that has curl fetches the URL.
    @Test func withoutLibcurlGetSaysWhyAndExitsOne() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 10_000, seed: 7)
        server.setRoute("/a.bin", Route(body: body))
        let url = server.url("/a.bin").absoluteString
        let failed = try await MonsoonProcess(["get", "-o", "out", url], in: folder.path, environment: try Self.brokenLibcurl(in: folder)).finish()
        #expect(failed.status == 1)
        #expect(failed.errors == "monsoon: cannot open libcurl: \(folder.file("lib"))/libcurl.so.4: file too short; install or upgrade it: apt-get install libcurl4\n")
        #expect(server.requests(for: "/a.bin").isEmpty)

        let rerun = try await MonsoonProcess(["get", "-o", "out", url], in: folder.path).finish()
        #expect(rerun.status == 0, "\(rerun.errors)")
        #expect(try SHA256.hex(fileAt: folder.file("out/a.bin")) == body.sha256Hex())
    }

    /// Commands that only read the library never load libcurl: they work without it.
    @Test func podcastListingsNeverLoadLibcurl() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let environment = try Self.brokenLibcurl(in: folder)
        let listed = try await MonsoonProcess(["podcasts"], in: folder.path, environment: environment).finish()
        #expect(listed.status == 0 && listed.errors.isEmpty, "\(listed.errors)")
        #expect(listed.output == "no podcasts yet; subscribe with 'monsoon add URL'\n")
        let exported = try await MonsoonProcess(["export"], in: folder.path, environment: environment).finish()
        #expect(exported.status == 0 && exported.errors.isEmpty, "\(exported.errors)")
        #expect(exported.output.contains("<opml version=\"2.0\">"))
    }

    /// An environment whose libcurl.so.4, found first, is no library.
    private static func brokenLibcurl(in folder: Folder) throws -> [String: String] {
        let libraries = folder.file("lib")
        try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
        try Data("not a library\n".utf8).write(to: URL(fileURLWithPath: libraries + "/libcurl.so.4"))
        return ["LD_LIBRARY_PATH": [libraries, ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"]].compactMap { $0 }.joined(separator: ":")]
    }

    /// Every connection to the home is closed when a run ends, the hooks' too: the last one to
    /// close merges the log into the database and removes it, so no `-wal` file stays behind.
    @Test func aRunLeavesNoLogFileInTheHome() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        for index in 0..<6 { server.setRoute("/\(index).bin", Route(body: .pattern(size: 4_000, seed: UInt64(index)))) }
        let urls = (0..<6).map { server.url("/\($0).bin").absoluteString }
        let home = folder.file("home")
        for (index, options) in [[], ["--exec", "true {}", "--exec-jobs", "3"], ["--write-info-json"]].enumerated() {
            let run = try await MonsoonProcess(["get", "-o", "out\(index)"] + options + urls, in: folder.path, home: home).finish()
            #expect(run.status == 0, "\(options): \(run.errors)")
            #expect(folder.contents("out\(index)").filter { $0.hasSuffix(".bin") }.count == 6)
            #expect(!FileManager.default.fileExists(atPath: home + "/monsoon.sqlite-wal"), "\(options)")
        }
        // Nor when the queue cannot be opened (here: from a newer Monsoon) after the settings were read.
        let newer = folder.file("newer")
        try FileManager.default.createDirectory(atPath: newer, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            let database = try Database(path: newer + "/monsoon.sqlite")
            try database.execute("CREATE TABLE schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL); INSERT INTO schema_versions VALUES ('downloads', 999)")
        }
        for options in [[], ["--exec", "true {}"]] {
            let refused = try await MonsoonProcess(["get", "-o", "out"] + options + urls, in: folder.path, home: newer).finish()
            #expect(refused.status == 1 && refused.errors.contains("schema version 999"), "\(options): \(refused.errors)")
            #expect(!FileManager.default.fileExists(atPath: newer + "/monsoon.sqlite-wal"), "\(options)")
        }
    }

    @Test func exitStatusesOfTheBinary() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/ok", Route(body: .bytes([1])))
        server.setRoute("/gone", Route.html(status: 410, "<html>gone</html>"))
        let ok = try await MonsoonProcess(["get", server.url("/ok").absoluteString], in: folder.path).finish()
        #expect(ok.status == 0)
        #expect(ok.output == "\(folder.file("ok"))\t1\n")
        let failed = try await MonsoonProcess(["get", server.url("/gone").absoluteString], in: folder.path).finish()
        #expect(failed.status == 1)
        let usage = try await MonsoonProcess(["get", "--bogus"], in: folder.path).finish()
        #expect(usage.status == 2)
        #expect(usage.errors.contains("monsoon: unknown option '--bogus'"))
        server.setRoute("/big", Route(body: .bytes([2])))
        let disk = try await MonsoonProcess(["get", "--min-free", "1000000T", server.url("/big").absoluteString], in: folder.path).finish()
        #expect(disk.status == 3)
        // What is already downloaded is reported, not fetched again.
        let again = try await MonsoonProcess(["get", server.url("/ok").absoluteString], in: folder.path).finish()
        #expect(again.status == 0)
        #expect(again.output == "\(folder.file("ok"))\t1\talready there\n")
        #expect(server.requests(for: "/ok").count == 1)
    }
}
