import Foundation
import Testing
@testable import MonsoonEngine

/// The pieces of a WARC file, each alone: base32, digests, a record's head, gzip members and
/// their repair, and the decisions about a download's exchanges.
@Suite struct WARCRecordTests {
    /// Where the whole members of `fd` end, and how many there are.
    static func scan(_ fd: Int32, _ path: String) throws -> [Int] {
        let scan = try GzipMemberScan.completeEnd(of: fd, path: path)
        return [scan.end, scan.members]
    }

    @Test func mediaIsStoredAndTextCompressed() {
        func level(_ type: String?) -> Int32 {
            let head = "HTTP/1.1 200 OK\r\n" + (type.map { "content-TYPE: \($0)\r\n" } ?? "") + "Content-Length: 5\r\n\r\n"
            return WARCArchive.State.payloadLevel(head: Array(head.utf8))
        }
        #expect(level("audio/mpeg") == 0 && level("video/mp4") == 0 && level("image/jpeg") == 0 && level(nil) == 0)
        #expect(level("text/vtt") == 6 && level("application/json+chapters") == 6 && level("application/rss+xml; charset=utf-8") == 6)
        #expect(level("application/x-subrip") == 6 && level("TEXT/HTML") == 6)
    }

    @Test func aMemberBegunCompressedCanStoreTheRest() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("switch.gz")
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        #expect(fd >= 0)
        defer { close(fd) }
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let writer = GzipMemberWriter()
        try writer.begin(fd: fd, path: path, level: 6)
        try writer.write(noise)
        #expect(writer.compressedFraction > 0.9, "noise does not compress")
        try writer.storeFromHere()
        try writer.write(noise)
        try writer.finish()
        // One member, whole (its CRC and length check out), holding both MiBs.
        #expect(try Self.scan(fd, path) == [writer.written, 1])
        let gunzip = Process()
        gunzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gunzip.arguments = ["-dc", path]
        let pipe = Pipe()
        gunzip.standardOutput = pipe
        try gunzip.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        gunzip.waitUntilExit()
        #expect(gunzip.terminationStatus == 0 && data == Data(noise + noise))
    }

    @Test func base32MatchesRFC4648() {
        // RFC 4648 §10's test vectors.
        let vectors = ["": "", "f": "MY======", "fo": "MZXQ====", "foo": "MZXW6===", "foob": "MZXW6YQ=",
                       "fooba": "MZXW6YTB", "foobar": "MZXW6YTBOI======"]
        for (text, encoded) in vectors { #expect(Base32.encode(Array(text.utf8)) == encoded, "\(text)") }
        #expect(Base32.encode([0xFF, 0x00, 0x10]) == "74ABA===")
    }

    @Test func sha1LabelsAreBase32() throws {
        // sha1("abc") = a9993e36…, as warcio and wget write it.
        #expect(try SHA1.label(of: Array("abc".utf8)) == "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5")
        #expect(try SHA1.label(of: []) == "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
    }

    @Test func aRecordsHeadIsCRLFLinesInOrder() {
        let record = WARCRecord(type: "response", id: "<urn:uuid:00000000-0000-0000-0000-000000000001>", date: Date(timeIntervalSince1970: 1_700_000_000),
                                targetURI: "http://example.com/a\r\nWARC-Type: evil", fields: [("WARC-IP-Address", "127.0.0.1")],
                                contentType: "application/http;msgtype=response", contentLength: 12, blockDigest: "sha1:A", payloadDigest: "sha1:B")
        let text = String(decoding: record.head(), as: UTF8.self)
        #expect(text == "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000001>\r\n"
                + "WARC-Date: 2023-11-14T22:13:20Z\r\nWARC-Target-URI: http://example.com/a%0D%0AWARC-Type:%20evil\r\nWARC-IP-Address: 127.0.0.1\r\n"
                + "WARC-Block-Digest: sha1:A\r\nWARC-Payload-Digest: sha1:B\r\nContent-Type: application/http;msgtype=response\r\n"
                + "Content-Length: 12\r\n\r\n", "a line break in a value never starts a field of its own")
        #expect(WARCRecord.newID().hasPrefix("<urn:uuid:") && WARCRecord.newID() != WARCRecord.newID())
    }

    @Test func theTargetURIHasNoCredentialsAndIsOneEncodedLine() {
        #expect(WARCRecord.targetURI("https://user:secret@cdn.example.com/a b/é.mp3?t=1") == "https://cdn.example.com/a%20b/%C3%A9.mp3?t=1")
        #expect(WARCRecord.targetURI("http://h.example/a@b?c=@") == "http://h.example/a@b?c=@", "an @ after the host is no userinfo")
        #expect(WARCRecord.targetURI("http://h.example/%41\u{7F}") == "http://h.example/%41%7F")
    }

    @Test func aProxysTunnelAndCredentialsAreNotRecorded() {
        let connect = Array("CONNECT cdn.example.com:443 HTTP/1.1\r\nHost: cdn.example.com:443\r\nProxy-Authorization: Basic dTpw\r\n\r\n".utf8)
        #expect(connect.withUnsafeBytes(WARCExchange.isTunnelRequest))
        #expect(!Array("GET /a HTTP/1.1\r\n\r\n".utf8).withUnsafeBytes(WARCExchange.isTunnelRequest))
        let request = "GET http://h.example/a HTTP/1.1\r\nHost: h.example\r\nproxy-authorization: Basic dTpw\r\nAuthorization: Basic eDp5\r\n\r\n"
        let exchange = WARCExchange(url: "http://h.example/a", ip: nil, date: Date(), request: Array(request.utf8))
        #expect(String(decoding: exchange.recordedRequest, as: UTF8.self) == "GET http://h.example/a HTTP/1.1\r\nHost: h.example\r\nAuthorization: Basic eDp5\r\n\r\n",
                "the site's credentials are the request as sent; the proxy's are not")
    }

    @Test func aWARCThatCannotBeWrittenFailsTheDownloadNeverHoldsIt() {
        // A full WARC disk is not the download's disk: never held for space there (a loop of
        // resumes), the download fails with the WARC's file named and its part kept.
        let error = WARCError.system("cannot write the WARC file /w/cap-00000.warc.gz.open", errno: ENOSPC).downloadError
        #expect(error.code == .warcNotWritten)
        #expect(error.message == "its WARC record could not be written (cannot write the WARC file /w/cap-00000.warc.gz.open: the disk is full; "
                + "free some space (or give --warc a file on another disk), then run again); the downloaded part is kept, and the next run records and places it")
    }

    @Test func anExchangeReadsItsHead() {
        var exchange = WARCExchange(url: "http://h/a", ip: nil, date: Date(), request: Array("GET /a HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        exchange.response = Array("HTTP/1.1 302 Found\r\nLocation: /b\r\ncontent-length: 0\r\n\r\n".utf8)
        #expect(exchange.status == 302 && exchange.responseHeader("Location") == "/b" && !exchange.hadBody && exchange.responseIsComplete)
        exchange.response = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n".utf8)
        #expect(exchange.isChunked && exchange.hadBody && !exchange.responseIsComplete)
        let (prefix, suffix) = WARCArchive.State.framing(exchange, size: 300)
        #expect(String(decoding: prefix, as: UTF8.self) == "12c\r\n" && String(decoding: suffix, as: UTF8.self) == "\r\n0\r\n\r\n")
    }

    static func exchange(_ status: Int, _ path: String = "/a") -> WARCExchange {
        WARCExchange(url: "http://h" + path, ip: "127.0.0.1", date: Date(), request: Array("GET \(path) HTTP/1.1\r\n\r\n".utf8),
                     response: Array("HTTP/1.1 \(status) X\r\n\r\n".utf8))
    }

    @Test func theExchangesOfAFileWaitForItAndTheOthersGoAtOnce() {
        var capture = WARCCapture()
        // A redirect hop, then a 200 cut short at 100 bytes: the hop now, the 200 waits.
        var now = capture.attemptEnded([Self.exchange(302), Self.exchange(200, "/b")], kept: 0..<100)
        #expect(now.map(\.status) == [302] && capture.pieces.map(\.range) == [0..<100])
        // A 503 (no body kept): at once.
        now = capture.attemptEnded([Self.exchange(503, "/b")], kept: nil)
        #expect(now.map(\.status) == [503] && capture.pieces.count == 1)
        // The resume's 206 brings the rest.
        now = capture.attemptEnded([Self.exchange(206, "/b")], kept: 100..<250)
        #expect(now.isEmpty && capture.pieces.map(\.range) == [0..<100, 100..<250])
        let payload = WARCPayload(pieces: capture.pieces, url: "http://h/a", path: "/x")
        #expect(payload.wholeHead?.exchange.status == 200 && payload.wholeHead?.fromThisRun == true, "the exchange from the first byte gives the head")
        #expect(payload.rangesField(size: 250) == "0-99 200, 100-249 206")
        // The part started over from byte 0: the earlier pieces' bytes are gone, their heads go now.
        now = capture.attemptEnded([Self.exchange(200, "/b")], kept: 0..<250)
        #expect(now.map(\.status) == [200, 206] && capture.pieces.map(\.range) == [0..<250])
        #expect(WARCPayload(pieces: capture.pieces, url: "", path: "").rangesField(size: 250) == nil, "one 200 brought it all")
        #expect(capture.abandon().count == 1 && capture.pieces.isEmpty)
        // A part cut back to its checkpoint (after a reboot): the piece before keeps what is left of it.
        #expect(capture.attemptEnded([Self.exchange(200)], kept: 0..<500).isEmpty)
        now = capture.attemptEnded([Self.exchange(206)], kept: 300..<1000)
        #expect(now.isEmpty && capture.pieces.map(\.range) == [0..<300, 300..<1000])
    }

    @Test func aFileResumedFromAnEarlierRunNamesTheGap() throws {
        var payload = WARCPayload(pieces: [.init(exchange: Self.exchange(206), range: 400..<1000)], url: "", path: "")
        #expect(payload.wholeHead == nil, "a 206's head never heads the whole file: a resource, without the earlier 200")
        #expect(payload.rangesField(size: 1000) == "0-399 earlier, 400-999 206")
        // The earlier run's 200, kept with the part.
        let earlier = Self.exchange(200)
        let kept = try #require(WARCHeadAttribute.encode(earlier))
        payload.earlierHead = WARCHeadAttribute.decode(kept)
        #expect(payload.wholeHead?.exchange.response == earlier.response && payload.wholeHead?.fromThisRun == false)
        #expect(payload.wholeHead?.exchange.url == "http://h/a" && payload.wholeHead?.exchange.ip == "127.0.0.1")
        var large = earlier
        large.response = Array("HTTP/1.1 200 OK\r\nX: \(String(repeating: "x", count: 4000))\r\n\r\n".utf8)
        #expect(WARCHeadAttribute.encode(large) == nil, "over 3 KiB: not kept")
        #expect(WARCHeadAttribute.decode(Array("http://h/a\n1\n\nHTTP/1.1 206 P\r\n\r\n".utf8)) == nil, "only a 200's head")
    }

    @Test func gzipMembersAreFoundWholeAndACutOneIsLeftOut() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("members.gz")
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        #expect(fd >= 0)
        defer { close(fd) }
        let writer = GzipMemberWriter()
        var ends: [Int] = []
        var total = 0
        for index in 0..<3 {
            try writer.begin(fd: fd, path: path, level: index == 0 ? 6 : 1)
            try writer.write(Array(repeating: UInt8(index), count: 300_000 * (index + 1)))
            try writer.finish()
            total += writer.written
            ends.append(total)
        }
        #expect(try Self.scan(fd, path) == [ends[2], 3])
        #expect(ftruncate(fd, off_t(ends[2] - 5)) == 0)
        #expect(try Self.scan(fd, path) == [ends[1], 2], "the third member lost its trailer")
        // A read that fails (here EISDIR; EIO on a failing disk) is no end of file: nothing is cut.
        let folderFD = open(folder.path, O_RDONLY | O_DIRECTORY)
        defer { close(folderFD) }
        #expect(throws: WARCError.self) { try GzipMemberScan.completeEnd(of: folderFD, path: folder.path) }
    }
}
