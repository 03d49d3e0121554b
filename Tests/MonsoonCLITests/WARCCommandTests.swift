import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// `get --warc` and `archive --warc`, in-process against the test server, judged by warcio:
/// `check` passes, `index` lists a request and a response for every exchange, and `extract`
/// of each file's response gives the file's bytes.
@Suite struct WARCCommandTests {
    /// The file's records pass `warcio check`, and their list starts with a warcinfo.
    static func validRecords(_ file: String, in folder: Folder) async throws -> [Warcio.Record] {
        let check = try await Warcio.check(file, in: folder)
        #expect(check.status == 0, "warcio check \(file): \(check.output) \(check.errors)")
        #expect(!check.output.contains("failed") && check.output.contains("digest pass"), "\(check.output)")
        let records = try await Warcio.index(file, in: folder)
        #expect(records.first?.type == "warcinfo")
        return records
    }

    static func records(_ records: [Warcio.Record], _ type: String, _ url: URL) -> [Warcio.Record] {
        records.filter { $0.type == type && $0.uri == url.absoluteString }
    }

    @Test func getRecordsEveryExchangeARedirectIncluded() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = [Body.pattern(size: 150_000, seed: 1), Body.pattern(size: 90_000, seed: 2), Body.pattern(size: 60_000, seed: 3)]
        server.setRoute("/a.mp3", Route(body: bodies[0], contentType: "audio/mpeg", etag: "\"a\""))
        server.setRoute("/b.mp3", Route(body: bodies[1], contentType: "audio/mpeg", sendsContentLength: false))
        server.setRoute("/old.mp3", Route(body: .bytes([]), faults: [.redirect(to: server.url("/c.mp3").absoluteString, status: 301)]))
        server.setRoute("/c.mp3", Route(body: bodies[2], contentType: "audio/mpeg"))
        let urls = ["/a.mp3", "/b.mp3", "/old.mp3"].map { server.url($0) }
        let result = await runMonsoon(["get", "-o", "out", "--warc", "capture.warc.gz"] + urls.map(\.absoluteString), in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.errors.contains("monsoon: recorded the run in WARC: \(folder.file("capture-00000.warc.gz"))\n"))
        #expect(folder.contents() == ["capture-00000.warc.gz", "out"])

        let records = try await Self.validRecords("capture-00000.warc.gz", in: folder)
        #expect(records.filter { $0.type == "warcinfo" }.count == 1)
        for url in urls + [server.url("/c.mp3")] {
            #expect(Self.records(records, "request", url).count == 1, "\(url)")
            #expect(Self.records(records, "response", url).count == 1, "\(url)")
        }
        let hop = try #require(Self.records(records, "response", urls[2]).first)
        #expect(hop.status == "301" && hop.truncated == "unspecified", "the hop's head, its body not kept")
        for (path, (name, body)) in zip(["/a.mp3", "/b.mp3", "/c.mp3"], zip(["a.mp3", "b.mp3", "c.mp3"], bodies)) {
            let response = try #require(Self.records(records, "response", server.url(path)).first)
            #expect(response.status == "200" && response.ranges == nil && response.truncated == nil)
            #expect(try SHA256.hex(fileAt: folder.file("out/" + name)) == body.sha256Hex())
            #expect(try await Warcio.payloadSHA256("capture-00000.warc.gz", offset: response.offset, in: folder) == body.sha256Hex(), "\(name)")
        }
    }

    @Test func credentialsStayInThePrivateRequestRecordAndNeverInTheTargetURI() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 5000, seed: 13)
        server.setRoute("/p.mp3", Route(body: body))
        var parts = try #require(URLComponents(url: server.url("/p.mp3"), resolvingAgainstBaseURL: false))
        parts.user = "me"
        parts.password = "secret"
        let result = await runMonsoon(["get", "-o", "out", "--warc", "capture.warc.gz", try #require(parts.url).absoluteString], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(server.requests(for: "/p.mp3").first?.header("Authorization") == "Basic bWU6c2VjcmV0")
        let mode = try FileManager.default.attributesOfItem(atPath: folder.file("capture-00000.warc.gz"))[.posixPermissions] as? Int
        #expect(mode == 0o600, "the request record holds the Authorization header as sent")
        let records = try await Self.validRecords("capture-00000.warc.gz", in: folder)
        #expect(Self.records(records, "request", server.url("/p.mp3")).count == 1 && Self.records(records, "response", server.url("/p.mp3")).count == 1)
        #expect(!records.contains { $0.uri?.contains("secret") ?? false }, "no user or password in WARC-Target-URI")
    }

    @Test func aDownloadResumedInTheRunAndOneResumedByTheNextRunExtractWhole() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let inRun = Body.pattern(size: 400_000, seed: 4)
        let acrossRuns = Body.pattern(size: 300_000, seed: 5)
        server.setRoute("/d.mp3", Route(body: inRun, contentType: "audio/mpeg", etag: "\"d\"", faults: [.dropAfter(bytes: 100_000, times: 1)]))
        server.setRoute("/e.mp3", Route(body: acrossRuns, contentType: "audio/mpeg", etag: "\"e\"", faults: [.stallAfter(bytes: 120_000, seconds: 30, times: 1)]))
        let d = server.url("/d.mp3"), e = server.url("/e.mp3")

        // The first run is stopped (Ctrl-C) while e's server stalls after 120,000 bytes: its part stays.
        let interruption = Interruption()
        let run = Task { await runMonsoon(["get", "-o", "out", "--warc", "capture.warc.gz", e.absoluteString], in: folder.path, interruption: interruption) }
        try await waitUntil("e's part holds the bytes sent") { (try? FileManager.default.attributesOfItem(atPath: folder.file("out/e.mp3.part"))[.size] as? Int) == 120_000 }
        interruption.trigger()
        let first = await run.value
        #expect(first.status == 130, "\(first.errors)")
        let firstRecords = try await Self.validRecords("capture-00000.warc.gz", in: folder)
        #expect(Self.records(firstRecords, "request", e).count == 1)
        let cut = try #require(Self.records(firstRecords, "response", e).first)
        #expect(cut.status == "200" && cut.truncated == "unspecified", "the stopped download's head, its body in the part, not in the WARC")

        // The second: d drops once and goes on with Range in the run; e goes on from its part.
        let second = await runMonsoon(["get", "-o", "out", "--warc", "capture.warc.gz", d.absoluteString, e.absoluteString], in: folder.path)
        #expect(second.status == 0, "\(second.errors)")
        #expect(server.requests(for: "/d.mp3").map { $0.header("Range") } == [nil, "bytes=100000-"])
        #expect(server.requests(for: "/e.mp3").map { $0.header("Range") } == [nil, "bytes=120000-"])
        #expect(folder.contents() == ["capture-00000.warc.gz", "capture-00001.warc.gz", "out"], "a rerun never writes over the first run's file")
        let records = try await Self.validRecords("capture-00001.warc.gz", in: folder)
        // Each exchange has its request and its head; the file is in the response headed by the 200
        // that announced it whole (the other run's for e, kept with its part), never under a 206's head.
        #expect(Self.records(records, "request", d).count == 2 && Self.records(records, "response", d).compactMap(\.status).sorted() == ["200", "206"])
        #expect(Self.records(records, "request", e).count == 1 && Self.records(records, "response", e).compactMap(\.status).sorted() == ["200", "206"])
        let dResponse = try #require(Self.records(records, "response", d).first { $0.status == "200" })
        #expect(dResponse.ranges == "0-99999 200, 100000-399999 206" && dResponse.truncated == nil, "the head of the exchange from byte 0")
        let eResponse = try #require(Self.records(records, "response", e).first { $0.status == "200" })
        #expect(eResponse.ranges == "0-119999 earlier, 120000-299999 206" && eResponse.truncated == nil, "the first run's 200, kept with the part")
        for resume in Self.records(records, "response", d) + Self.records(records, "response", e) where resume.status == "206" {
            #expect(resume.truncated == "unspecified", "a resume's head alone: its bytes are in the whole response")
        }
        for (name, body, response) in [("d.mp3", inRun, dResponse), ("e.mp3", acrossRuns, eResponse)] {
            #expect(try SHA256.hex(fileAt: folder.file("out/" + name)) == body.sha256Hex())
            #expect(try await Warcio.payloadSHA256("capture-00001.warc.gz", offset: response.offset, in: folder) == body.sha256Hex(), "\(name)")
        }
    }

    @Test func archiveRecordsTheFeedAndEachEpisode() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = ArchiveCommandTests.serve(server, count: 3)
        let feed = server.url("/feed.xml")
        let result = await runMonsoon(["archive", feed.absoluteString, "-o", "A", "--warc", "podcasts.warc.gz"], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        let records = try await Self.validRecords("podcasts-00000.warc.gz", in: folder)
        #expect(Self.records(records, "request", feed).count == 1)
        let feedResponse = try #require(Self.records(records, "response", feed).first)
        #expect(feedResponse.status == "200")
        #expect(try await Warcio.payloadSHA256("podcasts-00000.warc.gz", offset: feedResponse.offset, in: folder)
                == (try SHA256.hex(fileAt: folder.file("A/Archive Show/feed.xml"))), "the feed as received, as archive keeps it")
        let names = ["2024-02-01 - Talk 1.mp3", "2024-02-02 - Interview 2.mp3", "2024-02-03 - Talk 3.mp3"]
        for (index, (name, body)) in zip(names, bodies).enumerated() {
            let url = server.url("/ep\(index + 1).mp3")
            #expect(Self.records(records, "request", url).count == 1)
            let response = try #require(Self.records(records, "response", url).first)
            #expect(try SHA256.hex(fileAt: folder.file("A/Archive Show/" + name)) == body.sha256Hex())
            #expect(try await Warcio.payloadSHA256("podcasts-00000.warc.gz", offset: response.offset, in: folder) == body.sha256Hex(), "\(name)")
        }
    }

    @Test func filesRotateAtTheMaximumSizeEachWithItsWarcinfo() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = (1...3).map { Body.pattern(size: 100_000, seed: UInt64(10 + $0)) }
        for (index, body) in bodies.enumerated() { server.setRoute("/r\(index).bin", Route(body: body)) }
        let urls = (0..<3).map { server.url("/r\($0).bin") }
        let result = await runMonsoon(["get", "-o", "out", "-j", "1", "--warc", "small.warc.gz", "--warc-max-size", "50K"] + urls.map(\.absoluteString),
                                      in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        let files = folder.contents().filter { $0.hasSuffix(".warc.gz") }
        #expect(files == ["small-00000.warc.gz", "small-00001.warc.gz", "small-00002.warc.gz"], "a new file after each download passed 50 KiB")
        var found: [String: String] = [:]
        for file in files {
            let records = try await Self.validRecords(file, in: folder)
            #expect(records.filter { $0.type == "warcinfo" }.count == 1, "\(file)")
            for response in records where response.type == "response" {
                found[response.uri ?? ""] = try await Warcio.payloadSHA256(file, offset: response.offset, in: folder)
            }
        }
        #expect(found == Dictionary(uniqueKeysWithValues: zip(urls.map(\.absoluteString), bodies.map { $0.sha256Hex() })))
    }

    @Test func aWARCThatCannotBeWrittenStopsTheRunBeforeAnyRequest() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a.mp3", Route(body: .pattern(size: 1000, seed: 1)))
        #expect(FileManager.default.createFile(atPath: folder.file("plain"), contents: Data()))
        let result = await runMonsoon(["get", "--warc", "plain/capture.warc.gz", server.url("/a.mp3").absoluteString], in: folder.path)
        #expect(result.status == 1)
        #expect(result.errors.contains("monsoon: --warc: cannot create the WARC folder \(folder.file("plain"))"), "\(result.errors)")
        #expect(server.requests.isEmpty)

        for (arguments, message) in [(["--warc-max-size", "1M"], "--warc-max-size goes with --warc FILE"),
                                     (["--warc", "x.warc.gz", "--discard"], "--warc records the files it downloads, and --discard keeps none")] {
            let usage = await runMonsoon(["get"] + arguments + [server.url("/a.mp3").absoluteString], in: folder.path)
            #expect(usage.status == 2 && usage.errors.contains(message), "\(usage.errors)")
        }
    }

    @Test func aFileLeftOpenByAKilledRunIsClosedByTheNextRun() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 200_000, seed: 6)
        server.setRoute("/k.mp3", Route(body: body, etag: "\"k\"", faults: [.stallAfter(bytes: 50_000, seconds: 30, times: 1)]))
        let url = server.url("/k.mp3").absoluteString
        let killed = try MonsoonProcess(["get", "-o", "out", "--warc", "capture.warc.gz", url], in: folder.path)
        try await waitUntil("the part holds the bytes sent") { (try? FileManager.default.attributesOfItem(atPath: folder.file("out/k.mp3.part"))[.size] as? Int) == 50_000 }
        kill(killed.process.processIdentifier, SIGKILL)
        #expect(try await killed.finish().status == 128 + SIGKILL)
        #expect(folder.contents() == ["capture-00000.warc.gz.open", "out"], "no finished name for a file its run did not close")

        let next = await runMonsoon(["get", "-o", "out", "--warc", "capture.warc.gz", url], in: folder.path)
        #expect(next.status == 0, "\(next.errors)")
        #expect(next.errors.contains("monsoon: \(folder.file("capture-00000.warc.gz")) was left open by a run that was stopped: "), "\(next.errors)")
        #expect(folder.contents() == ["capture-00000.warc.gz", "capture-00001.warc.gz", "out"])
        _ = try await Self.validRecords("capture-00000.warc.gz", in: folder)
        let records = try await Self.validRecords("capture-00001.warc.gz", in: folder)
        // The killed run's 200, kept with the part, heads the whole file; the resume's 206 has its own record.
        #expect(Self.records(records, "response", server.url("/k.mp3")).compactMap(\.status).sorted() == ["200", "206"])
        let response = try #require(Self.records(records, "response", server.url("/k.mp3")).first { $0.status == "200" })
        #expect(response.ranges == "0-49999 earlier, 50000-199999 206")
        #expect(try await Warcio.payloadSHA256("capture-00001.warc.gz", offset: response.offset, in: folder) == body.sha256Hex())
    }

    @Test func aRunThatWouldHandItsDownloadsToAnotherMonsoonRefuses() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/slow.mp3", Route(body: .pattern(size: 100_000, seed: 7), faults: [.stallAfter(bytes: 10_000, seconds: 30, times: 1)]))
        server.setRoute("/a.mp3", Route(body: .pattern(size: 1000, seed: 8)))
        let other = try MonsoonProcess(["get", "-o", "out", server.url("/slow.mp3").absoluteString], in: folder.path)
        try await waitUntil("the other monsoon is downloading") { !server.requests(for: "/slow.mp3").isEmpty }
        let refused = await runMonsoon(["get", "-o", "out", "--warc", "capture.warc.gz", server.url("/a.mp3").absoluteString], in: folder.path)
        other.interrupt()
        _ = try await other.finish()
        #expect(refused.status == 1)
        #expect(refused.errors.contains("monsoon: --warc: another monsoon is downloading in this home, and the downloads handed to it would not be recorded"),
                "\(refused.errors)")
        #expect(server.requests(for: "/a.mp3").isEmpty && !folder.contents().contains { $0.hasPrefix("capture") })
    }

    @Test func anArchiveThatWouldHandItsDownloadsToAnotherMonsoonRefusesBeforeAnyFeed() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = ArchiveCommandTests.serve(server, count: 1)
        server.setRoute("/slow.mp3", Route(body: .pattern(size: 100_000, seed: 7), faults: [.stallAfter(bytes: 10_000, seconds: 30, times: 1)]))
        let other = try MonsoonProcess(["get", "-o", "out", server.url("/slow.mp3").absoluteString], in: folder.path)
        try await waitUntil("the other monsoon is downloading") { !server.requests(for: "/slow.mp3").isEmpty }
        let refused = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A", "--warc", "podcasts.warc.gz"], in: folder.path)
        other.interrupt()
        _ = try await other.finish()
        #expect(refused.status == 1)
        #expect(refused.errors.contains("monsoon: --warc: another monsoon is downloading in this home"), "\(refused.errors)")
        #expect(server.requests(for: "/feed.xml").isEmpty, "refused before the feed was fetched")
    }

    @Test func aChunkedAnswerKeepsItsHeadAndPassesWarciosCheck() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 70_000, seed: 12)
        let bytes = body.data()
        // Sent in three chunks, as a server streaming it would.
        var chunked = Data()
        for piece in [bytes[0..<1000], bytes[1000..<50_000], bytes[50_000...]] {
            chunked += Data((String(piece.count, radix: 16) + "\r\n").utf8) + piece + Data("\r\n".utf8)
        }
        chunked += Data("0\r\n\r\n".utf8)
        server.setRoute("/c.mp3", Route(body: .bytes([UInt8](chunked)), contentType: "audio/mpeg", supportsRanges: false,
                                        extraHeaders: [("Transfer-Encoding", "chunked")], sendsContentLength: false))
        let url = server.url("/c.mp3")
        let result = await runMonsoon(["get", "-o", "out", "--warc", "capture.warc.gz", url.absoluteString], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(try SHA256.hex(fileAt: folder.file("out/c.mp3")) == body.sha256Hex())
        let records = try await Self.validRecords("capture-00000.warc.gz", in: folder)
        let response = try #require(Self.records(records, "response", url).first)
        #expect(response.status == "200")
        // warcio takes the chunks off: the file's bytes.
        #expect(try await Warcio.payloadSHA256("capture-00000.warc.gz", offset: response.offset, in: folder) == body.sha256Hex())
    }

    @Test func aFileWholeFromAnEarlierRunIsKeptAsAResource() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // No length: after the last byte curl waits for the connection's end, which the first run never sees.
        let body = Body.pattern(size: 80_000, seed: 9)
        server.setRoute("/w.mp3", Route(body: body, etag: "\"w\"", faults: [.stallAfter(bytes: 80_000, seconds: 30, times: 1)], sendsContentLength: false))
        let url = server.url("/w.mp3")
        // A first run without --warc: no head is kept with the part.
        let interruption = Interruption()
        let run = Task { await runMonsoon(["get", "-o", "out", url.absoluteString], in: folder.path, interruption: interruption) }
        try await waitUntil("the part holds every byte") { (try? FileManager.default.attributesOfItem(atPath: folder.file("out/w.mp3.part"))[.size] as? Int) == 80_000 }
        interruption.trigger()
        #expect(await run.value.status == 130)

        let second = await runMonsoon(["get", "-o", "out", "--warc", "capture.warc.gz", url.absoluteString], in: folder.path)
        #expect(second.status == 0, "\(second.errors)")
        #expect(server.requests(for: "/w.mp3").last?.header("Range") == "bytes=80000-")
        let records = try await Self.validRecords("capture-00000.warc.gz", in: folder)
        #expect(Self.records(records, "response", url).map(\.status) == ["416"], "the answer to the resume: the part was whole")
        let resource = try #require(Self.records(records, "resource", url).first)
        #expect(resource.ranges == "0-79999 earlier")
        #expect(try await Warcio.payloadSHA256("capture-00000.warc.gz", offset: resource.offset, in: folder) == body.sha256Hex())
    }

    /// A status line without a reason phrase (`HTTP/1.1 200`) is a 200 all the same: its file is
    /// recorded as the response's payload, not as a truncated head of status 0.
    @Test func aStatusLineWithoutAReasonIsRecordedWhole() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 50_000, seed: 17)
        server.setRoute("/bare.mp3", Route(body: body, contentType: "audio/mpeg", statusLine: "HTTP/1.1 200"))
        let url = server.url("/bare.mp3")
        let result = await runMonsoon(["get", "-o", "out", "--warc", "capture.warc.gz", url.absoluteString], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        let records = try await Self.validRecords("capture-00000.warc.gz", in: folder)
        let response = try #require(Self.records(records, "response", url).first)
        #expect(response.status == "200" && response.truncated == nil)
        #expect(try await Warcio.payloadSHA256("capture-00000.warc.gz", offset: response.offset, in: folder) == body.sha256Hex())
    }

    /// A head cut off mid-way is recorded once, as cut (`WARC-Truncated: disconnect`), never with
    /// a second reason; the retry that brought the file is recorded whole.
    @Test func aHeadCutMidWayHasOneTruncatedField() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 40_000, seed: 18)
        server.setRoute("/cut.mp3", Route(body: body, contentType: "audio/mpeg", faults: [.dropInHead(bytes: 60, times: 1)]))
        let url = server.url("/cut.mp3")
        let result = await runMonsoon(["get", "-o", "out", "--warc", "capture.warc.gz", url.absoluteString], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(server.requests(for: "/cut.mp3").count == 2, "\(result.output) \(result.errors)")
        let records = try await Self.validRecords("capture-00000.warc.gz", in: folder)
        #expect(Self.records(records, "response", url).map(\.truncated) == ["disconnect", nil])
        let text = try await ArchiveCommandTests.shell("/bin/sh", ["-c", "zcat \"$0\" | grep -ac '^WARC-Truncated:'", folder.file("capture-00000.warc.gz")], input: "")
        #expect(text.output == "1\n", "one field, in the cut exchange's record")
    }
}
