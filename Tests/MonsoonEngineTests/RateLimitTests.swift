import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// `maxBytesPerSecond` holds over the whole run, whatever the number of transfers, measured on
/// the wire by the test server's own clock: a transfer paused for the limit leaves its socket
/// unread, so TCP's flow control holds the server's writes back.
///
/// Speeds are measurements, not `make test` checks: the tests that time the wire (about eight
/// seconds each) run in `make soak` (`MONSOON_SOAK=1`). The bucket's arithmetic is checked
/// deterministically in `TokenBucketTests`; here `make test` keeps what a limited run must do
/// whatever the machine's speed.
@Suite struct RateLimitTests {
    static let limit = 1_536 << 10   // 1.5 MiB/s
    static let timesTheWire = ProcessInfo.processInfo.environment["MONSOON_SOAK"] == "1"

    /// Eight limited together all finish, every file whole: 1.5 MiB in all, four times what the
    /// bucket holds at the start, so transfers are paused and let go in turn, and no byte is lost
    /// or doubled across the pauses.
    @Test func aLimitedRunFinishesEveryFileWhole() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let bodies = (1...8).map { Body.pattern(size: 192 << 10, seed: UInt64(70 + $0)) }
        for (index, body) in bodies.enumerated() { server.setRoute("/l\(index).mp3", Route(body: body)) }
        var configuration = fastConfiguration(concurrency: 8)
        configuration.maxBytesPerSecond = Self.limit
        let manager = DownloadManager(configuration: configuration)
        let ids = try await manager.enqueue(contentsOf: (0..<8).map { index in
            var asked = request(DownloadID("l\(index)"), server.url("/l\(index).mp3"), to: folder.file("l\(index).mp3"))
            asked.owner = .episode   // hashed as it is written: the bytes curl delivers again after a pause count once
            return asked
        })
        for (index, id) in ids.enumerated() {
            #expect(try await waitFor(manager, id, .completed, seconds: 60).checksum == bodies[index].sha256Hex())
        }
        await manager.shutdown()
        for index in 0..<8 { #expect(sha256(ofFile: folder.file("l\(index).mp3")) == bodies[index].sha256Hex()) }
        #expect(server.requests.count == 8, "one request each: a pause is not a new request")
    }

    /// The rates over every 5-second window from `start` to `end` (starting every quarter of a
    /// second), by the server's clock: each write's bytes spread over the time it took.
    static func windowRates(_ deliveries: [Delivery], from start: Date, to end: Date) -> [(start: Double, rate: Double)] {
        var rates: [(start: Double, rate: Double)] = []
        var from = start
        while from.addingTimeInterval(5) <= end {
            let to = from.addingTimeInterval(5)
            let bytes = deliveries.reduce(0.0) { $0 + $1.bytes(from: from, to: to) }
            rates.append((from.timeIntervalSince(start), bytes / 5))
            from = from.addingTimeInterval(0.25)
        }
        return rates
    }

    /// The steady part of a run: from a second after the server's first write began to when the
    /// first of the transfers had its last byte written, while every one still had bytes to go.
    ///
    /// The first second is left out: the connections' buffers (the server's send buffer, the
    /// client's receive buffer and curl's, which the engine keeps to a fraction of a second of each
    /// transfer's share) fill at once, before any flow control. Past the end, the server has less
    /// to send than the client reads (what a finished transfer left in the buffers is read at the
    /// limit), so its clock would see less than the limit.
    static func steadySpan(_ deliveries: [Delivery]) throws -> (from: Date, to: Date) {
        let first = try #require(deliveries.map(\.start).min())
        let ends = Dictionary(grouping: deliveries, by: \.path).values.compactMap { $0.map(\.end).max() }
        return (first.addingTimeInterval(1), try #require(ends.min()))
    }

    static func expectWithinTenPercent(_ rates: [(start: Double, rate: Double)], of limit: Int, _ what: String) {
        #expect(!rates.isEmpty, "\(what): the run was too short for a 5-second window")
        for window in rates {
            let error = (window.rate - Double(limit)) / Double(limit)
            #expect(abs(error) <= 0.1, "\(what): \(Int(window.rate)) B/s over the 5 s from \(window.start) s, \(Int((error * 100).rounded()))% off the limit of \(limit)")
        }
    }

    /// One transfer alone takes the whole limit (not a share of the slots), and no more: 12 MiB
    /// at 1.5 MiB/s, about 8 s.
    @Test(.enabled(if: timesTheWire, "it times the wire: make soak runs it")) func oneTransferStaysWithinTenPercentOfTheLimit() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.recordDeliveries()
        let body = Body.pattern(size: 12 << 20, seed: 41)
        server.setRoute("/one.mp3", Route(body: body, etag: "\"o1\""))
        var configuration = fastConfiguration(concurrency: 4)
        configuration.maxBytesPerSecond = Self.limit
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(request("one", server.url("/one.mp3"), to: folder.file("one.mp3")))
        try await waitFor(manager, "one", .completed, seconds: 60)
        await manager.shutdown()
        #expect(sha256(ofFile: folder.file("one.mp3")) == body.sha256Hex())
        let deliveries = server.deliveries
        let span = try Self.steadySpan(deliveries)
        Self.expectWithinTenPercent(Self.windowRates(deliveries, from: span.from, to: span.to), of: Self.limit, "one transfer")
    }

    /// Eight at once share the same limit, six into files and two counted (`.discard`), and each
    /// gets its turn: 8 × 1.5 MiB at 1.5 MiB/s in all, about 8 s.
    @Test(.enabled(if: timesTheWire, "it times the wire: make soak runs it")) func eightTransfersTogetherStayWithinTenPercentOfTheLimitAndEachGetsItsShare() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.recordDeliveries()
        let bodies = (1...8).map { Body.pattern(size: 1_536 << 10, seed: UInt64(50 + $0)) }
        for (index, body) in bodies.enumerated() { server.setRoute("/e\(index).mp3", Route(body: body)) }
        var configuration = fastConfiguration(concurrency: 8)
        configuration.maxBytesPerSecond = Self.limit
        let manager = DownloadManager(configuration: configuration)
        let ids = try await manager.enqueue(contentsOf: (0..<8).map { index in
            DownloadRequest(id: DownloadID("e\(index)"), url: server.url("/e\(index).mp3"),
                            destination: index < 6 ? .file(folder.file("e\(index).mp3")) : .discard(checksum: false))
        })
        for id in ids { try await waitFor(manager, id, .completed, seconds: 60) }
        await manager.shutdown()
        for index in 0..<6 { #expect(sha256(ofFile: folder.file("e\(index).mp3")) == bodies[index].sha256Hex()) }
        #expect(server.maxConcurrentRequests == 8)
        let deliveries = server.deliveries
        let span = try Self.steadySpan(deliveries)
        Self.expectWithinTenPercent(Self.windowRates(deliveries, from: span.from, to: span.to), of: Self.limit, "eight transfers")
        // None starves: over the first steady window, each had at least half of an even share.
        let share = Double(Self.limit) / 8 * 5
        for index in 0..<8 {
            let bytes = deliveries.filter { $0.path == "/e\(index).mp3" }.reduce(0.0) { $0 + $1.bytes(from: span.from, to: span.from.addingTimeInterval(5)) }
            #expect(bytes >= share / 2, "e\(index) had \(Int(bytes)) bytes of an even share of \(Int(share)) over 5 s")
        }
    }

    /// Without a limit nothing paces the transfers: 4 × 8 MiB on loopback go at several times the
    /// limit above (a generous floor: loopback gives hundreds of MB/s to a debug build, and still
    /// about 11 MB/s under ThreadSanitizer).
    @Test(.enabled(if: timesTheWire, "it times the wire: make soak runs it")) func anUnlimitedRunIsNotSlowed() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.recordDeliveries()
        let body = Body.pattern(size: 8 << 20, seed: 60)
        for index in 0..<4 { server.setRoute("/u\(index).mp3", Route(body: body)) }
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 4))
        let ids = try await manager.enqueue(contentsOf: (0..<4).map { index in
            request(DownloadID("u\(index)"), server.url("/u\(index).mp3"), to: folder.file("u\(index).mp3"))
        })
        for id in ids { try await waitFor(manager, id, .completed, seconds: 60) }
        await manager.shutdown()
        let deliveries = server.deliveries
        let first = try #require(deliveries.map(\.start).min())
        let last = try #require(deliveries.map(\.end).max())
        let rate = Double(4 * body.count) / max(0.001, last.timeIntervalSince(first))
        #expect(rate > Double(4 * Self.limit), "\(Int(rate)) B/s without a limit")
    }
}
