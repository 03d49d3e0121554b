import Foundation
import MonsoonTestServer
import Testing

@Suite("Serving bodies, ranges and validators")
struct ServingTests {
    @Test func wholeBodyMatchesPatternAndHash() throws {
        let server = try TestServer()
        let body = Body.pattern(size: 300_000, seed: 7)
        server.setRoute("/a.bin", Route(body: body, etag: "\"v1\"", contentDisposition: "attachment; filename=\"a.bin\""))

        let result = try Curl.run([server.url("/a.bin").absoluteString])
        #expect(result.exitCode == 0)
        #expect(result.status == 200)
        #expect(result.headers["content-length"] == "300000")
        #expect(result.headers["accept-ranges"] == "bytes")
        #expect(result.headers["etag"] == "\"v1\"")
        #expect(result.headers["content-disposition"] == "attachment; filename=\"a.bin\"")
        #expect(result.headers["date"] != nil)
        #expect(result.body == body.data())
        #expect(SHA256.hex(result.body) == body.sha256Hex())
        #expect(server.bodyBytesSent == 300_000)
    }

    /// A gated route holds its answer until the test opens the gate: the request is seen at once,
    /// no body byte leaves before the gate opens, and the whole body after.
    @Test func aGatedRouteAnswersOnceItsGateOpens() throws {
        let server = try TestServer()
        defer { server.stop() }
        let body = Body.pattern(size: 50_000, seed: 9)
        let other = Body.pattern(size: 1000, seed: 10)
        let gate = Gate()
        server.setRoute("/held", Route(body: body, gate: gate))
        server.setRoute("/other", Route(body: other))
        let opener = Thread {
            let deadline = Date().addingTimeInterval(20)
            while server.requests(for: "/held").isEmpty && Date() < deadline { usleep(1000) }
            // Another answer, asked for after the held one, comes whole meanwhile.
            let answered = Result { try Curl.run([server.url("/other").absoluteString]) }
            if case .success(let result) = answered, result.body == other.data(), server.bodyBytesSent == other.count { gate.open() }
        }
        opener.start()
        let result = try Curl.run([server.url("/held").absoluteString])
        #expect(gate.isOpen, "opened only while nothing of the held body had been sent")
        #expect(result.status == 200)
        #expect(result.body == body.data())
    }

    /// With `gateAfter`, the head and the first bytes go at once and the rest waits for the
    /// gate: a transfer held in flight mid-body, exactly there, however long the test takes.
    @Test func aRouteGatedAfterSomeBytesHoldsTheRestUntilItOpens() throws {
        let server = try TestServer()
        defer { server.stop() }
        let body = Body.pattern(size: 200_000, seed: 10)
        let gate = Gate()
        server.setRoute("/held", Route(body: body, gate: gate, gateAfter: 50_000))
        // Opens the gate once the first bytes are out, unless more went: then it stays shut,
        // and curl gives up at its time limit, short.
        let opener = Thread {
            let deadline = Date().addingTimeInterval(20)
            while server.bodyBytesSent < 50_000 && Date() < deadline { usleep(1000) }
            if server.bodyBytesSent == 50_000 { gate.open() }
        }
        opener.start()
        let result = try Curl.run([server.url("/held").absoluteString])
        #expect(gate.isOpen, "opened while exactly the first 50,000 bytes had left")
        #expect(result.status == 200)
        #expect(result.body == body.data())
    }

    @Test func fileBodyWithLastModified() throws {
        let path = temporaryPath("file.bin")
        let content = Body.pattern(size: 200_003, seed: 3).data()
        try content.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        let server = try TestServer()
        server.setRoute("/f", Route(body: .file(path), lastModified: modified))

        let result = try Curl.run([server.url("/f").absoluteString])
        #expect(result.status == 200)
        #expect(result.body == content)
        #expect(result.headers["last-modified"] == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(Body.file(path).count == 200_003)

        // A file that has gone away is answered 404.
        server.setRoute("/missing", Route(body: .file(path + ".nope")))
        #expect(try Curl.run([server.url("/missing").absoluteString]).status == 404)
    }

    @Test func rangeRequests() throws {
        let server = try TestServer()
        let body = Body.pattern(size: 10_000, seed: 1)
        let data = body.data()
        server.setRoute("/r", Route(body: body))
        let url = server.url("/r?x=1").absoluteString  // the query does not affect routing

        let middle = try Curl.run(["-r", "100-199", url])
        #expect(middle.status == 206)
        #expect(middle.headers["content-range"] == "bytes 100-199/10000")
        #expect(middle.headers["content-length"] == "100")
        #expect(middle.body == data[100..<200])

        let open = try Curl.run(["-r", "9000-", url])
        #expect(open.status == 206)
        #expect(open.headers["content-range"] == "bytes 9000-9999/10000")
        #expect(open.body == data[9000...])

        let suffix = try Curl.run(["-r", "-50", url])
        #expect(suffix.status == 206)
        #expect(suffix.headers["content-range"] == "bytes 9950-9999/10000")
        #expect(suffix.body == data[9950...])

        let clamped = try Curl.run(["-r", "9990-20000", url])
        #expect(clamped.headers["content-range"] == "bytes 9990-9999/10000")

        let multiple = try Curl.run(["-r", "0-1,5-6", url])
        #expect(multiple.status == 200)
        #expect(multiple.body == data)
    }

    @Test func unsatisfiableRange() throws {
        let server = try TestServer()
        server.setRoute("/r", Route(body: .bytes(Array(repeating: 1, count: 1000))))
        let result = try Curl.run(["-r", "5000-", server.url("/r").absoluteString])
        #expect(result.status == 416)
        #expect(result.headers["content-range"] == "bytes */1000")
    }

    @Test func ifRange() throws {
        let server = try TestServer()
        let modified = Date(timeIntervalSince1970: 1_600_000_000)
        let body = Body.pattern(size: 5000, seed: 2)
        server.setRoute("/r", Route(body: body, etag: "\"v2\"", lastModified: modified))
        let url = server.url("/r").absoluteString

        let stale = try Curl.run(["-r", "1000-", "-H", "If-Range: \"v1\"", url])
        #expect(stale.status == 200)
        #expect(stale.body == body.data())

        let current = try Curl.run(["-r", "1000-", "-H", "If-Range: \"v2\"", url])
        #expect(current.status == 206)
        #expect(current.body.count == 4000)

        let byDate = try Curl.run(["-r", "1000-", "-H", "If-Range: \(HTTPDate.format(modified))", url])
        #expect(byDate.status == 206)

        let weak = try Curl.run(["-r", "1000-", "-H", "If-Range: W/\"v2\"", url])
        #expect(weak.status == 200)
    }

    @Test func conditionalRequests() throws {
        let server = try TestServer()
        let modified = Date(timeIntervalSince1970: 1_600_000_000)
        server.setRoute("/c", Route(body: .bytes([1, 2, 3]), etag: "\"v1\"", lastModified: modified))
        let url = server.url("/c").absoluteString

        let matching = try Curl.run(["-H", "If-None-Match: \"v0\", \"v1\"", url])
        #expect(matching.status == 304)
        #expect(matching.headers["etag"] == "\"v1\"")
        #expect(matching.body.isEmpty)
        #expect(try Curl.run(["-H", "If-None-Match: \"v0\"", url]).status == 200)
        #expect(try Curl.run(["-H", "If-Modified-Since: \(HTTPDate.format(modified))", url]).status == 304)
        #expect(try Curl.run(["-H", "If-Modified-Since: \(HTTPDate.format(modified - 10))", url]).status == 200)
        // If-None-Match takes precedence over If-Modified-Since.
        #expect(try Curl.run(["-H", "If-None-Match: \"v0\"", "-H",
                              "If-Modified-Since: \(HTTPDate.format(modified))", url]).status == 200)
    }

    @Test func rangesUnsupported() throws {
        let server = try TestServer()
        let body = Body.pattern(size: 4096, seed: 9)
        server.setRoute("/n", Route(body: body, supportsRanges: false))
        let result = try Curl.run(["-r", "100-", server.url("/n").absoluteString])
        #expect(result.status == 200)
        #expect(result.headers["accept-ranges"] == nil)
        #expect(result.body == body.data())
    }

    @Test func headUnknownPathAndPermanentStatus() throws {
        let server = try TestServer()
        server.setRoute("/h", Route(body: .pattern(size: 123_456, seed: 4), contentType: "video/mp4",
                                    extraHeaders: [("X-Extra", "yes")]))
        server.setRoute("/gone", .html(status: 410, "<html><body>gone</body></html>"))

        let head = try Curl.run(["-I", server.url("/h").absoluteString])
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "123456")
        #expect(head.headers["content-type"] == "video/mp4")
        #expect(head.headers["x-extra"] == "yes")
        #expect(server.bodyBytesSent == 0)

        let gone = try Curl.run(["-r", "0-1", server.url("/gone").absoluteString])
        #expect(gone.status == 410)
        #expect(gone.headers["content-type"] == "text/html; charset=utf-8")
        #expect(String(decoding: gone.body, as: UTF8.self) == "<html><body>gone</body></html>")

        let unknown = try Curl.run([server.url("/nowhere").absoluteString])
        #expect(unknown.status == 404)
        #expect(unknown.headers["content-type"]?.hasPrefix("text/html") == true)

        server.removeRoute("/h")
        #expect(try Curl.run([server.url("/h").absoluteString]).status == 404)
    }

    @Test func patternBodies() {
        let mib = 1 << 20
        let a = Body.pattern(size: 3 * mib + 5, seed: 1).data()
        let b = Body.pattern(size: 3 * mib + 5, seed: 2).data()
        #expect(a.count == 3 * mib + 5)
        #expect(a == Body.pattern(size: 3 * mib + 5, seed: 1).data())
        // Different seeds differ in every MiB block; one body's blocks differ from each other.
        for block in 0..<3 {
            #expect(a[block * mib..<(block + 1) * mib] != b[block * mib..<(block + 1) * mib])
        }
        let block = 64 * 1024
        #expect(a[0..<block] != a[block..<2 * block])
        #expect(Body.pattern(size: 3 * mib + 5, seed: 1).sha256Hex() == SHA256.hex(a))
    }

    /// Deliveries are recorded only once asked for, per request target and connection, and add up
    /// to the body bytes sent.
    @Test func deliveriesRecordEveryBodyWrite() throws {
        let server = try TestServer()
        server.setRoute("/d", Route(body: .pattern(size: 300_000, seed: 4)))
        #expect(try Curl.run([server.url("/d").absoluteString]).status == 200)
        #expect(server.deliveries.isEmpty, "off until asked for")
        server.recordDeliveries()
        #expect(try Curl.run([server.url("/d?n=2").absoluteString]).status == 200)
        // The server records a write once it returns, which may be after curl has read it all.
        let deadline = Date().addingTimeInterval(10)
        while server.deliveries.reduce(0, { $0 + $1.bytes }) < 300_000 && Date() < deadline { usleep(1000) }
        let deliveries = server.deliveries
        #expect(deliveries.reduce(0) { $0 + $1.bytes } == 300_000)
        #expect(Set(deliveries.map(\.path)) == ["/d?n=2"])
        #expect(Set(deliveries.map(\.connectionID)).count == 1)
        #expect(deliveries.allSatisfy { $0.end >= $0.start })
        let (from, to) = (deliveries.map(\.start).min()!, deliveries.map(\.end).max()!)
        #expect(abs(server.bytesDelivered(from: from, to: to.addingTimeInterval(1), path: "/d") - 300_000) < 1)
        #expect(server.bytesDelivered(from: from, to: to.addingTimeInterval(1), path: "/other") == 0)
        server.resetStatistics()
        #expect(server.deliveries.isEmpty)
    }

    /// A write's bytes are spread evenly over the time it took (it blocked while the client's
    /// window was full).
    @Test func aDeliveryIsSpreadOverItsSpan() {
        let start = Date(timeIntervalSince1970: 1_000)
        let write = Delivery(path: "/a", connectionID: 1, start: start, end: start.addingTimeInterval(2), bytes: 1_000)
        #expect(write.bytes(from: start, to: start.addingTimeInterval(1)) == 500)
        #expect(write.bytes(from: start.addingTimeInterval(-5), to: start.addingTimeInterval(5)) == 1_000)
        #expect(write.bytes(from: start.addingTimeInterval(1.5), to: start.addingTimeInterval(9)) == 250)
        #expect(write.bytes(from: start.addingTimeInterval(3), to: start.addingTimeInterval(4)) == 0)
        let instant = Delivery(path: "/a", connectionID: 1, start: start, end: start, bytes: 10)
        #expect(instant.bytes(from: start, to: start.addingTimeInterval(1)) == 10)
        #expect(instant.bytes(from: start.addingTimeInterval(-1), to: start) == 0, "a window ends before its end instant")
    }
}
