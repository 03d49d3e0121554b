#if canImport(Glibc)
import Glibc
#endif

/// An error from setting up the listening socket.
public struct TestServerError: Error, CustomStringConvertible {
    /// The failing call, e.g. `bind`.
    public let operation: String
    /// The `errno` it failed with.
    public let code: Int32

    public var description: String {
        "TestServer: \(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}

/// Thin wrappers over the BSD socket calls the server needs.
enum Socket {
    /// A listening TCP socket on 127.0.0.1:`port` (0: ephemeral), or on every address with
    /// `anyAddress`; returns it and the bound port.
    static func listen(port: Int, anyAddress: Bool = false) throws -> (fd: Int32, port: Int) {
        let socket = try bound(port: port, anyAddress: anyAddress)
        guard Glibc.listen(socket.fd, 1024) == 0 else { return try fail("listen", socket.fd) }
        return socket
    }

    /// A TCP socket bound to 127.0.0.1:`port` (0: ephemeral), not listening; returns it and the bound port.
    static func bound(port: Int, anyAddress: Bool = false) throws -> (fd: Int32, port: Int) {
        guard (0...65535).contains(port) else { throw TestServerError(operation: "port \(port)", code: EINVAL) }
        // CLOEXEC everywhere: tests spawn processes (curl), which must not inherit server sockets.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestServerError(operation: "socket", code: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = anyAddress ? 0 : in_addr_t(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { return try fail("bind", fd) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return try fail("getsockname", fd) }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    private static func fail(_ operation: String, _ fd: Int32) throws -> (fd: Int32, port: Int) {
        let code = errno
        close(fd)
        throw TestServerError(operation: operation, code: code)
    }

    /// Accepts a connection (blocking); -1 with errno set on failure.
    static func accept(_ listener: Int32) -> Int32 {
        // accept4(SOCK_CLOEXEC) is a GNU extension Swift's Glibc module does not expose, so set
        // FD_CLOEXEC right after; a process spawned in between is the (tiny) remaining window.
        let fd = Glibc.accept(listener, nil, nil)
        if fd >= 0 {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            // Responses are written as header + body sends; without NODELAY, Nagle's algorithm
            // and delayed ACKs can add ~40 ms to every small keep-alive response.
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        return fd
    }

    /// Sends all `count` bytes. MSG_NOSIGNAL: a vanished peer gives EPIPE, not SIGPIPE.
    /// `more` (MSG_MORE) lets the kernel coalesce headers with the first body chunk.
    ///
    /// `count` is told about bytes *before* they are handed to the kernel and corrected
    /// afterwards for any that were not sent. Counting afterwards would let a client receive
    /// the last bytes and exit before the count includes them, making "bytes sent" checks
    /// after a download racy; this way the count is exact whenever the client has the data.
    static func sendAll(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int, more: Bool = false, count counter: (Int) -> Void = { _ in }) -> Bool {
        var done = 0
        let flags = Int32(MSG_NOSIGNAL) | (more ? Int32(MSG_MORE) : 0)
        while done < count {
            let left = count - done
            counter(left)
            let n = send(fd, bytes + done, left, flags)
            if n > 0 {
                done += n
                if n < left { counter(n - left) }
            } else {
                counter(-left)
                if n < 0 && errno == EINTR { continue }
                return false
            }
        }
        return true
    }
}
