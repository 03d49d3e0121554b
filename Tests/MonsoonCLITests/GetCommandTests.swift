import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI
import MonsoonPodcasts

/// `monsoon get`, run in-process against the test server.
@Suite struct GetCommandTests {
    @Test func downloadsEveryURLAndPrintsALineEach() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = (1...3).map { Body.pattern(size: 200_000 * $0, seed: UInt64($0)) }
        for (index, body) in bodies.enumerated() { server.setRoute("/ep\(index).mp3", Route(body: body, etag: "\"\(index)\"")) }
        let result = await runMonsoon(["get", "-o", "out", "-j", "2"] + (0..<3).map { server.url("/ep\($0).mp3").absoluteString }, in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(folder.contents("out") == ["ep0.mp3", "ep1.mp3", "ep2.mp3"])
        for (index, body) in bodies.enumerated() {
            #expect(try SHA256.hex(fileAt: folder.file("out/ep\(index).mp3")) == body.sha256Hex())
        }
        let lines = result.output.split(separator: "\n").map(String.init).sorted()
        #expect(lines == (0..<3).map { "\(folder.file("out/ep\($0).mp3"))\t\(200_000 * ($0 + 1))" })
        #expect(result.errors.isEmpty)
        #expect(server.maxConcurrentRequests <= 2)
    }

    /// A long list is queued in batches, the first few on their own (so their downloads start
    /// while the rest is written), then 32 at a time with `-j 1` (2, 32 and 6 here): the order, the
    /// files, the lines and the queue are those of one batch.
    @Test func aLongListKeepsItsOrderAcrossItsBatches() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = (0..<40).map { Body.pattern(size: 1000 + $0, seed: UInt64($0)) }
        for (index, body) in bodies.enumerated() { server.setRoute("/f\(index).bin", Route(body: body)) }
        let urls = (0..<40).map { server.url("/f\($0).bin").absoluteString }
        let result = await runMonsoon(["get", "-o", "out", "-j", "1"] + urls, in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(server.requests.map(\.path) == (0..<40).map { "/f\($0).bin" }, "one at a time, in the order given")
        for (index, body) in bodies.enumerated() {
            #expect(try SHA256.hex(fileAt: folder.file("out/f\(index).bin")) == body.sha256Hex())
        }
        #expect(result.output.split(separator: "\n").count == 40)
        #expect(result.errors.isEmpty, "\(result.errors)")
        let queue = await runMonsoon(["downloads", "--json"], in: folder.path)
        let rows = try JSONSerialization.jsonObject(with: Data(queue.output.utf8)) as? [[String: Any]] ?? []
        #expect(rows.compactMap { $0["url"] as? String } == urls, "the queue in the order given, each once")
        #expect(rows.allSatisfy { $0["status"] as? String == "completed" })
    }

    @Test func failuresGoToStandardErrorAndExitOne() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/ok", Route(body: .bytes([1, 2, 3])))
        server.setRoute("/missing.mp3", Route.html(status: 404, "<html>gone</html>"))
        let result = await runMonsoon(["get", server.url("/ok").absoluteString, server.url("/missing.mp3").absoluteString], in: folder.path)
        #expect(result.status == 1)
        #expect(result.errors.contains("monsoon: d2 failed: \(server.url("/missing.mp3").absoluteString): the server answered 404 Not Found"))
        #expect(result.errors.contains("monsoon: 1 of 2 downloaded, 1 failed ("))
        #expect(folder.contents() == ["ok"], "no file, and no part, for the 404")
    }

    /// Names from Content-Disposition and URL paths are composed (NFC): `café` sent decomposed by
    /// one server and composed by another is one name in the folder, not two look-alikes.
    @Test func namesAreComposedSoOneNameIsNeverTwo() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a", Route(body: .bytes([1]), contentDisposition: "attachment; filename*=UTF-8''cafe%CC%81.mp3"))
        server.setRoute("/b", Route(body: .bytes([2]), contentDisposition: "attachment; filename*=UTF-8''caf%C3%A9.mp3"))
        server.setRoute("/cafe%CC%81-path.mp3", Route(body: .bytes([3])))
        let result = await runMonsoon(["get", "-o", "out", "-j", "1", server.url("/a").absoluteString, server.url("/b").absoluteString,
                                       server.url("/cafe%CC%81-path.mp3").absoluteString], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        // Compared as bytes: Swift's `String` equality would take NFD and NFC for one text.
        let names = folder.contents("out").map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        let composed = ["caf\u{E9} (2).mp3", "caf\u{E9}-path.mp3", "caf\u{E9}.mp3"].map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(names == composed, "\(folder.contents("out").map { $0.unicodeScalars.map { String($0.value, radix: 16) } })")
    }

    /// A name whose path would pass the system's limit (PATH_MAX) is refused before a byte is
    /// written, with the reason: never a file written and then lost track of.
    @Test func aPathPastTheSystemsLimitIsRefusedBeforeAByteIsWritten() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let name = String(repeating: "n", count: 200) + ".mp3"
        server.setRoute("/" + name, Route(body: .pattern(size: 5000, seed: 2)))
        // A folder of about 4,000 bytes: its own path fits, the file's does not.
        let deep = (0..<20).reduce(folder.file("out")) { path, _ in path + "/" + String(repeating: "d", count: 195) }
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        let result = await runMonsoon(["get", "-o", deep, server.url("/" + name).absoluteString], in: folder.path)
        #expect(result.status == 1)
        let length = deep.utf8.count + 1 + name.utf8.count + ".part".utf8.count
        #expect(result.errors.contains("the file's path would be \(length) bytes long, longer than the system allows (4095): "
                                       + "download into a folder with a shorter path (-o), or choose shorter names"), "\(result.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: deep).isEmpty, "nothing written")
    }

    @Test func lackOfDiskSpaceExitsThree() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/big", Route(body: .pattern(size: 1000, seed: 1)))
        let result = await runMonsoon(["get", "--min-free", "1000000T", server.url("/big").absoluteString], in: folder.path)
        #expect(result.status == 3)
        #expect(result.errors.contains("not enough disk space"))
        #expect(server.requests.isEmpty)
    }

    @Test func readsURLsFromAFileAndStandardInput() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        for name in ["a", "b", "c"] { server.setRoute("/\(name)", Route(body: .bytes(Array(name.utf8)))) }
        let list = "# my list\r\n\n\(server.url("/a"))\r\n \t\(server.url("/b"))  \n   \n\(server.url("/a"))"
        try list.write(toFile: folder.file("urls.txt"), atomically: true, encoding: .utf8)
        let fromFile = await runMonsoon(["get", "-i", "urls.txt", "-o", "one", server.url("/c").absoluteString], in: folder.path)
        #expect(fromFile.status == 0, "\(fromFile.errors)")
        #expect(folder.contents("one") == ["a", "b", "c"])
        #expect(server.requests(for: "/a").count == 1, "a URL listed twice is downloaded once")

        let fromStdin = await runMonsoon(["get", "-o", "two", "-i", "-"], in: folder.path, stdin: "\(server.url("/c"))\nnot a url\nftp://example.com/x\n")
        #expect(fromStdin.status == 2, "lines that are not URLs are a usage error, after the good ones are downloaded")
        #expect(folder.contents("two") == ["c"])
        #expect(fromStdin.errors.contains("monsoon: 1 of 3 downloaded, 2 not URLs"))
        #expect(fromStdin.errors.contains("skipped 'not a url': not an http or https URL"))
        #expect(fromStdin.errors.contains("skipped 'ftp://example.com/x'"))
    }

    @Test func usageErrorsExitTwo() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let none = await runMonsoon(["get"], in: folder.path)
        #expect(none.status == 2)
        #expect(none.errors.contains("monsoon: give at least one URL"))
        let badJobs = await runMonsoon(["get", "-j", "0", "http://example.com/"], in: folder.path)
        #expect(badJobs.status == 2)
        #expect(badJobs.errors.contains("--jobs takes 1 to 1000 downloads at once, not 0"))
        // Past the limit too: a huge -j once made the engine reserve room for twice as many rows.
        let hugeJobs = await runMonsoon(["get", "-j", "1000000000000", "http://example.com/"], in: folder.path)
        #expect(hugeJobs.status == 2)
        #expect(hugeJobs.errors.contains("--jobs takes 1 to 1000 downloads at once, not 1000000000000"))
        let unknown = await runMonsoon(["get", "--outt", "x", "http://example.com/"], in: folder.path)
        #expect(unknown.status == 2)
        #expect(unknown.errors.hasPrefix("monsoon: unknown option '--outt'; did you mean '--out'?\n"))
        let notANumber = await runMonsoon(["--quiet", "get", "--retries", "many", "http://example.com/"], in: folder.path)
        #expect(notANumber.status == 2)
        let noCommand = await runMonsoon(["frobnicate"], in: folder.path)
        #expect(noCommand.status == 2)
        let missingList = await runMonsoon(["get", "-i", "nope.txt"], in: folder.path)
        #expect(missingList.status == 1)
        #expect(missingList.errors.contains("cannot read the URL list"))
    }

    @Test func globalOptionsGoBeforeOrAfterTheCommand() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/q", Route(body: .bytes([1])))
        let before = await runMonsoon(["--quiet", "get", "-o", "a", server.url("/q").absoluteString], in: folder.path)
        let after = await runMonsoon(["get", "-o", "b", server.url("/q").absoluteString, "--quiet"], in: folder.path)
        #expect(before.status == 0 && after.status == 0)
        #expect(before.output.isEmpty && after.output.isEmpty, "--quiet prints nothing on success")
        // `--` ends options: what follows is a URL even if it looks like an option.
        let dashed = await runMonsoon(["get", "-o", "c", "--", "--quiet"], in: folder.path)
        #expect(dashed.status == 2)
        #expect(dashed.errors.contains("'--quiet' is not an http or https URL"))
    }

    @Test func helpAndVersion() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let help = await runMonsoon(["get", "--help"], in: folder.path)
        #expect(help.status == 0)
        #expect(help.output.contains("Usage: monsoon get"))
        #expect(help.output.contains("--per-host <n>"))
        let topics = await runMonsoon(["help"], in: folder.path)
        #expect(topics.output.contains("get"))
        let version = await runMonsoon(["--version"], in: folder.path)
        #expect(version.output == "\(MonsoonCLI.version)\n")
    }

    @Test func discardCountsAndHashesWithoutWriting() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 123_456, seed: 3)
        server.setRoute("/x.bin", Route(body: body))
        let result = await runMonsoon(["get", "--discard", "--checksum", "sha256", server.url("/x.bin").absoluteString], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == "\(server.url("/x.bin").absoluteString)\t123456\t\(body.sha256Hex())\n")
        #expect(folder.contents().isEmpty, "nothing written (not even a queue)")
        #expect(await runMonsoon(["get", "--discard", "--checksum", "md5", "http://example.com/"], in: folder.path).status == 2)
        #expect(await runMonsoon(["get", "--checksum", "sha256", "http://example.com/"], in: folder.path).status == 2)
    }

    @Test func networkOptionsAreChecked() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let both = await runMonsoon(["get", "-4", "-6", "http://example.com/a"], in: folder.path)
        #expect(both.status == 2 && both.errors.contains("-4 and -6 cannot be used together"))
        let proxy = await runMonsoon(["get", "--proxy", "ftp://proxy:21", "http://example.com/a"], in: folder.path)
        #expect(proxy.status == 2 && proxy.errors.contains("is not a proxy URL"))
        let rate = await runMonsoon(["download", "--limit-rate", "fast"], in: folder.path)
        #expect(rate.status == 2 && rate.errors.contains("not a speed"))
        let timeout = await runMonsoon(["get", "--connect-timeout", "0", "http://example.com/a"], in: folder.path)
        #expect(timeout.status == 2 && timeout.errors.contains("--connect-timeout must be between 0.001 and 3600 seconds"))
        let cacert = await runMonsoon(["get", "--cacert", "missing.pem", "http://127.0.0.1:9/a"], in: folder.path)
        #expect(cacert.status == 2 && cacert.errors.contains("cannot read the CA file \(folder.file("missing.pem"))"))
    }

    /// The rate the server delivered at in the steady part of a run, by its own clock: from half a
    /// second after its first write (the connections' buffers fill at once) to when the first
    /// transfer had its last byte written.
    /// The rate while every download runs, half a second from either end: the start's and the
    /// end's windows hold the bucket's burst and a download's last chunk, which a loaded machine
    /// stretches or squeezes (once 10.4% over in a window cut at the first end).
    static func steadyRate(_ server: TestServer) throws -> (rate: Double, seconds: Double) {
        let deliveries = server.deliveries
        let from = try #require(deliveries.map(\.start).min()).addingTimeInterval(0.5)
        let to = try #require(Dictionary(grouping: deliveries, by: \.path).values.compactMap { $0.map(\.end).max() }.min()).addingTimeInterval(-0.5)
        return (server.bytesDelivered(from: from, to: to) / to.timeIntervalSince(from), to.timeIntervalSince(from))
    }

    /// `--limit-rate` holds over the run, and wins over the setting.
    @Test func limitRateHoldsOverTheRunAndWinsOverTheSetting() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.recordDeliveries()
        let body = Body.pattern(size: 6 << 20, seed: 22)
        server.setRoute("/big.mp3", Route(body: body))
        #expect(await runMonsoon(["config", "set", "limit-rate", "16M"], in: folder.path).status == 0)
        let result = await runMonsoon(["get", "--limit-rate", "1M", "-o", "out", server.url("/big.mp3").absoluteString], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(try SHA256.hex(fileAt: folder.file("out/big.mp3")) == body.sha256Hex())
        let steady = try Self.steadyRate(server)
        #expect(steady.seconds > 2, "\(steady.seconds) s of steady transfer")
        #expect(abs(steady.rate / Double(1 << 20) - 1) <= 0.1, "\(Int(steady.rate)) B/s under --limit-rate 1M")
    }

    /// The setting `limit-rate` limits every download together; `--limit-rate 0` lifts it.
    @Test func theLimitRateSettingHoldsOverAllDownloads() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = (1...2).map { Body.pattern(size: 3 << 20, seed: UInt64(30 + $0)) }
        for (index, body) in bodies.enumerated() { server.setRoute("/s\(index).mp3", Route(body: body)) }
        let bad = await runMonsoon(["config", "set", "limit-rate", "fast"], in: folder.path)
        #expect(bad.status == 2 && bad.errors.contains("'fast' is not a valid limit-rate"), "\(bad.errors)")
        #expect(await runMonsoon(["config", "get", "limit-rate"], in: folder.path).output == "off\n")
        #expect(await runMonsoon(["config", "set", "limit-rate", "1M"], in: folder.path).output == "limit-rate = 1M\n")
        #expect(await runMonsoon(["config"], in: folder.path).output.contains("limit-rate           1M\n"))
        server.recordDeliveries()
        let limited = await runMonsoon(["get", "-j", "2", "-o", "out"] + (0..<2).map { server.url("/s\($0).mp3").absoluteString }, in: folder.path)
        #expect(limited.status == 0, "\(limited.errors)")
        for (index, body) in bodies.enumerated() { #expect(try SHA256.hex(fileAt: folder.file("out/s\(index).mp3")) == body.sha256Hex()) }
        let steady = try Self.steadyRate(server)
        #expect(steady.seconds > 2, "\(steady.seconds) s of steady transfer")
        #expect(abs(steady.rate / Double(1 << 20) - 1) <= 0.1, "\(Int(steady.rate)) B/s over two downloads under the setting 1M")

        // --limit-rate 0: no limit for this run, whatever the setting (a generous floor, four
        // times the setting, far below what loopback gives).
        server.resetStatistics()
        let big = Body.pattern(size: 16 << 20, seed: 33)
        server.setRoute("/free.mp3", Route(body: big))
        let free = await runMonsoon(["get", "--limit-rate", "0", "-o", "out", server.url("/free.mp3").absoluteString], in: folder.path)
        #expect(free.status == 0, "\(free.errors)")
        let deliveries = server.deliveries
        let span = try #require(deliveries.map(\.end).max()).timeIntervalSince(try #require(deliveries.map(\.start).min()))
        #expect(Double(big.count) / span > Double(4 << 20), "\(Int(Double(big.count) / span)) B/s with --limit-rate 0")
        #expect(await runMonsoon(["config", "set", "limit-rate", "off"], in: folder.path).output == "limit-rate = off\n")
    }

    @Test func everyCommandsHelpHasAnExample() async throws {
        func walk(_ command: any ParsableCommand.Type, _ path: [String]) -> [[String]] {
            [path] + command.configuration.subcommands.flatMap { walk($0, path + [$0.configuration.commandName]) }
        }
        let folder = Folder()
        defer { folder.remove() }
        for path in walk(Monsoon.self, []).dropFirst() {
            let help = await runMonsoon(["help"] + path, in: folder.path)
            #expect(help.status == 0)
            #expect(help.output.contains("\n  monsoon \(path[0])"), "'monsoon help \(path.joined(separator: " "))' shows no example")
        }
    }

    @Test func liveProgressOnATerminal() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // Held part-way until its progress has been drawn.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/slow.mp3", Route(body: .pattern(size: 600_000, seed: 1), gate: gate, gateAfter: 300_000))
        let output = TextOutput.capturing()
        async let run = runMonsoon(["get", server.url("/slow.mp3").absoluteString], in: folder.path, terminal: true, output: output)
        do {
            defer { gate.open() }   // when the wait fails too: the run, awaited as the test ends, must end
            try await waitUntil("a progress line") { output.text.contains("%") }
        }
        let result = await run
        #expect(result.status == 0)
        #expect(result.output.contains("slow.mp3"))
        #expect(result.output.contains("%"))
        #expect(result.output.contains("✓ slow.mp3"))
        #expect(result.errors.contains("1 of 1 downloaded"))
    }

    @Test func verboseDescribesEachRequest() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 300_000, seed: 4)
        server.setRoute("/ep.mp3", Route(body: body, etag: "\"v\"", faults: [.dropAfter(bytes: 100_000, times: 1)]))
        let url = server.url("/ep.mp3").absoluteString
        let text = await runMonsoon(["--verbose", "get", url], in: folder.path)
        #expect(text.status == 0, "\(text.errors)")
        #expect(try SHA256.hex(fileAt: folder.file("ep.mp3")) == body.sha256Hex())
        let lines = text.errors.split(separator: "\n").map(String.init)
        #expect(lines.first == "monsoon: d1 started: \(url)")
        let requests = lines.filter { $0.hasPrefix("monsoon: d1 127.0.0.1") }
        #expect(requests.count == 2, "\(lines)")
        #expect(requests.first?.contains(": HTTP 200, ") == true)
        #expect(requests.first?.contains(", new connection: ") == true, "the dropped request ends with its reason")
        #expect(requests.last?.contains(": HTTP 206 from byte 100000, ") == true, "\(requests)")

        server.setRoute("/ep.mp3", Route(body: body, etag: "\"v\"", faults: [.dropAfter(bytes: 100_000, times: 1)]))
        let json = await runMonsoon(["get", "--json", "--verbose", "-o", "again", url], in: folder.path)
        #expect(json.status == 0, "\(json.errors)")
        let attempts = json.output.split(separator: "\n").filter { $0.contains("\"event\": \"attempt\"") }
        #expect(attempts.count == 2, "\(json.output)")
        #expect(attempts.first?.contains("\"status\": 200") == true && attempts.first?.contains("\"error\": ") == true)
        #expect(attempts.last?.contains("\"status\": 206, \"bytes\": 200000, \"resumedFrom\": 100000") == true, "\(attempts)")
    }

    @Test func credentialsAreNeverPrinted() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/private.mp3", Route.html(status: 403, "<html>no</html>"))
        var components = URLComponents(url: server.url("/private.mp3"), resolvingAgainstBaseURL: false)!
        components.user = "alice"
        components.password = "s3cret"
        components.query = "token=abcdef&season=2"
        let result = await runMonsoon(["get", components.string!], in: folder.path)
        #expect(result.status == 1)
        #expect(!result.errors.contains("s3cret") && !result.errors.contains("abcdef") && !result.errors.contains("alice"))
        #expect(result.errors.contains("season=2"))
        #expect(server.requests.first?.header("Authorization")?.hasPrefix("Basic ") == true, "the credentials were used")
    }

    @Test func redaction() {
        #expect(Redaction.redact("https://u:p@h.example/feed?token=x&a=1") == "https://***:***@h.example/feed?token=***&a=1")
        #expect(Redaction.redact("https://h.example/a.mp3") == "https://h.example/a.mp3")
    }

    @Test func jsonText() throws {
        let text = "quote \" backslash \\ newline \n tab \t bell \u{7} é"
        let encoded = JSONText.string(text)
        let decoded = try JSONSerialization.jsonObject(with: Data("[\(encoded)]".utf8)) as? [String]
        #expect(decoded == [text])
        #expect(JSONText.number(1) == "1")
        #expect(JSONText.number(0.25) == "0.25")
    }

    @Test func sizes() {
        #expect(ByteSize(argument: "64M")?.bytes == 64 << 20)
        #expect(ByteSize(argument: "1.5k")?.bytes == 1536)
        #expect(ByteSize(argument: "2GiB")?.bytes == 2 << 30)
        #expect(ByteSize(argument: "100")?.bytes == 100)
        #expect(ByteSize(argument: "lots") == nil)
    }
}
