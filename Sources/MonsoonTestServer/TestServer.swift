import Foundation

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
    public init(port: Int = 0) throws {
        core = try ServerCore(port: port)
        self.port = core.port
        try core.start()
    }

    deinit { core.stop() }

    /// `http://127.0.0.1:PORT` followed by `path` (which should start with "/" and may carry a query).
    public func url(_ path: String) -> URL {
        let base = "http://127.0.0.1:\(port)"
        if let url = URL(string: base + path) { return url }
        let escaped = path.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? ""
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
        if path.contains("?") { return core.requests.filter { $0.path == path } }
        return core.requests.filter { request in
            (request.path.firstIndex(of: "?").map { String(request.path[..<$0]) } ?? request.path) == path
        }
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

    /// Client connections open right now.
    public var openConnections: Int { core.openConnections }

    /// Clears the recorded requests, the concurrency maximum and the byte count.
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

    /// `date` as an HTTP date (IMF-fixdate), e.g. for a Retry-After value.
    public static func httpDate(_ date: Date) -> String {
        HTTPDate.format(date)
    }
}
