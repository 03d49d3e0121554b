import FoundationEssentials
// Tests check bytes with `SHA256.hex(...)`, which the server shares with the engine.
@_exported import MonsoonBasics

/// A loopback HTTP/1.1 server for tests, demos and benchmarks.
///
/// It listens on 127.0.0.1, serves each connection on its own thread (keep-alive, GET and
/// HEAD, single byte ranges, conditional requests) and can inject faults per route:
///
/// ```swift
/// let server = try TestServer()
/// server.setRoute("/big.bin", Route(body: .pattern(size: 10 << 20, seed: 1), etag: "\"v1\"",
///                                   faults: [.dropAfter(bytes: 100_000, times: 1)]))
/// download(server.url("/big.bin"))
/// ```
///
/// Everything is thread-safe. `stop()` (also run by `deinit`) closes every socket and waits
/// for the server threads.
public final class TestServer: Sendable {
    /// The bound port (the ephemeral one picked by the system when created with port 0).
    public let port: Int
    private let core: ServerCore

    /// Binds 127.0.0.1 on `port` (0: an ephemeral port) and starts serving at once on background threads.
    /// Throws ``TestServerError`` if the socket cannot be set up (e.g. the port is taken).
    /// - Parameter anyAddress: bind every address instead: each of 127.0.0.0/8 then reaches the
    ///   server, a host of its own to a client (`make bench-cluster`'s 1,000 hosts). It is
    ///   reachable from the network too: only on a machine that is closed to it.
    public init(port: Int = 0, anyAddress: Bool = false) throws {
        core = try ServerCore(port: port, anyAddress: anyAddress)
        self.port = core.port
        try core.start()
    }

    deinit { core.stop() }

    /// `http://127.0.0.1:PORT` followed by `path` (which should start with "/" and may carry a query).
    public func url(_ path: String) -> URL {
        let base = "http://127.0.0.1:\(port)"
        if let url = URL(string: base + path) { return url }
        let escaped = path.percentEncoded(allowing: "!$&'()*+,-./:;=?@_~")   // Foundation's .urlQueryAllowed
        return URL(string: base + escaped)!
    }

    /// Serves `route` at `path` (matched against the request path without its query string),
    /// replacing any previous route there and resetting its fault counts.
    public func setRoute(_ path: String, _ route: Route) {
        core.setRoute(path, route)
    }

    /// Stops serving `path`: later requests get 404.
    public func removeRoute(_ path: String) {
        core.removeRoute(path)
    }

    /// Every request received (all paths, including unknown ones), in arrival order.
    public var requests: [RecordedRequest] { core.requests }

    /// The requests for `path`: compared without the query string, unless `path` has one itself.
    public func requests(for path: String) -> [RecordedRequest] {
        if path.contains("?") { return core.requests { $0.path == path } }
        return core.requests { Self.withoutQuery($0.path) == path }
    }

    /// The most requests being answered at the same moment: each counts from when its head
    /// was read until its response was finished or its connection dropped.
    public var maxConcurrentRequests: Int { core.maxActive }

    /// Body bytes written to sockets over all routes, including those of cut-off responses.
    ///
    /// Bytes are counted as they are handed to the kernel (and uncounted if that fails), so
    /// once a client has received data the count includes it: checking right after a client
    /// finishes is not racy. While a write is blocked the count can run ahead by up to one
    /// 64 KiB chunk per connection.
    public var bodyBytesSent: Int { core.bodyBytesSent }

    /// Records every body write from now on, as ``deliveries`` (off by default).
    ///
    /// - Parameter sendBuffer: the send buffer (SO_SNDBUF) of the connections accepted from now
    ///   on; nil keeps the system's, which grows to several MiB, so that a write returns long
    ///   before the client reads its bytes. The default, 16 KiB (the kernel doubles it), keeps the
    ///   server's clock within a fraction of a second of what the client takes off the wire.
    public func recordDeliveries(sendBuffer: Int? = 16 << 10) {
        core.recordDeliveries(sendBuffer: sendBuffer)
    }

    /// The body writes since ``recordDeliveries()`` was called (and the last
    /// ``resetStatistics()``), in the order they returned.
    public var deliveries: [Delivery] { core.deliveries }

    /// Body bytes that went out between `from` and `to` by the server's clock, for `path`
    /// (compared without the query string; nil: every path), each write spread evenly over the
    /// time it took (see ``Delivery``). Needs ``recordDeliveries()``.
    public func bytesDelivered(from: Date, to: Date, path: String? = nil) -> Double {
        deliveries.reduce(0) { sum, delivery in
            guard path.map({ Self.withoutQuery(delivery.path) == $0 }) ?? true else { return sum }
            return sum + delivery.bytes(from: from, to: to)
        }
    }

    private static func withoutQuery(_ path: String) -> String {
        path.firstIndex(of: "?").map { String(path[..<$0]) } ?? path
    }

    /// Client connections open right now.
    public var openConnections: Int { core.openConnections }

    /// Clears the recorded requests and deliveries, the concurrency maximum and the byte count.
    public func resetStatistics() {
        core.resetStatistics()
    }

    /// Closes the listener and all connections and waits for the server threads. Idempotent.
    public func stop() {
        core.stop()
    }

    /// A loopback port that refuses connections: bound but never listening, and held (so no
    /// other server can take it) until `close(fd)`. For tests of a host that cannot be reached.
    public static func refusingPort() throws -> (fd: Int32, port: Int) {
        try Socket.bound(port: 0)
    }
}
