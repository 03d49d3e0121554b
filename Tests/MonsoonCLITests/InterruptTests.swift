import Foundation
import Synchronization
import MonsoonTestServer
import Testing
@testable import MonsoonCLI
import MonsoonPodcasts

/// Ctrl-C and SIGTERM end every command at once, also while a feed is being fetched from a
/// server that never answers: exit 130, "monsoon: interrupted", nothing half-stored.
@Suite struct InterruptTests {
    /// A listening socket that never answers: connections open, and nothing ever comes back. The
    /// test takes them in (`accepted`) only to see that a command is inside its fetch.
    final class SilentServer: Sendable {
        let fd: Int32
        let port: UInt16
        private let connections = Mutex<[Int32]>([])

        init() throws {
            // Close-on-exec: no child (nor another test's check) inherits it; non-blocking: `accepted` only looks.
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let listening = bound == 0 && listen(fd, 16) == 0
                && withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } } == 0
            port = UInt16(bigEndian: address.sin_port)
            guard listening else { throw CLITestError("cannot listen on loopback") }
        }

        func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

        /// The connections made so far, taken in (and kept open, never read nor answered).
        var accepted: Int {
            connections.withLock { connections in
                while true {
                    let connection = accept(fd, nil, nil)
                    guard connection >= 0 else { break }   // EAGAIN: none waiting
                    _ = fcntl(connection, F_SETFD, FD_CLOEXEC)   // a child started meanwhile may hold it: it is never read anyway
                    connections.append(connection)
                }
                return connections.count
            }
        }

        func stop() {
            connections.withLock { for connection in $0 { close(connection) } }
            close(fd)
        }
    }

    /// Starts `arguments`, waits until `inside` says it is inside the fetch, sends `signal`, and
    /// expects it to end with 130 within a generous deadline (before, it sat there until the fetch
    /// timed out).
    private func interrupt(_ arguments: [String], in folder: Folder, with signal: Int32, once inside: @escaping () -> Bool) async throws -> RunResult {
        let process = try MonsoonProcess(arguments, in: folder.path)
        try await waitUntil("\(arguments.first ?? "") fetching") { inside() }
        kill(process.process.processIdentifier, signal)
        let result = try await process.finish(seconds: 10)
        #expect(result.status == 130, "\(arguments.first ?? ""): \(result.errors)")
        #expect(result.errors.hasSuffix("monsoon: interrupted\n"), "\(arguments.first ?? ""): \(result.errors)")
        return result
    }

    @Test func feedsThatNeverAnswerDoNotHoldCommandsPastCtrlC() async throws {
        let silent = try SilentServer()
        let server = try TestServer()
        let folder = Folder()
        defer { silent.stop(); server.stop(); folder.remove() }
        let feed = silent.url("/feed.xml")
        // Each command's connection is one more the silent server took in.
        var connections = 0
        let connected = { () -> Bool in silent.accepted > connections }
        _ = try await interrupt(["add", feed], in: folder, with: SIGINT, once: connected)
        connections = silent.accepted
        _ = try await interrupt(["inspect", feed], in: folder, with: SIGTERM, once: connected)
        connections = silent.accepted
        _ = try await interrupt(["archive", feed, "-o", "A"], in: folder, with: SIGINT, once: connected)
        connections = silent.accepted
        try OPML.write([.init(title: "Silent", feedURL: URL(string: feed)!)]).write(toFile: folder.file("list.opml"), atomically: true, encoding: .utf8)
        _ = try await interrupt(["import", "list.opml"], in: folder, with: SIGTERM, once: connected)
        let podcasts = try await MonsoonProcess(["podcasts", "--json"], in: folder.path).finish()
        #expect(podcasts.output == "[]\n", "nothing was subscribed: \(podcasts.output)")

        // A subscribed feed whose server stops answering mid-response.
        let items = "<item><title>One</title><guid>1</guid><enclosure url=\"\(server.url("/1.mp3").absoluteString)\" type=\"audio/mpeg\"/></item>"
        server.setRoute("/feed.xml", Route(body: .bytes(Array("<rss version=\"2.0\"><channel><title>Stalls</title>\(items)</channel></rss>".utf8)),
                                           contentType: "application/rss+xml"))
        let added = try await MonsoonProcess(["add", server.url("/feed.xml").absoluteString], in: folder.path).finish()
        #expect(added.status == 0, "\(added.errors)")
        server.setRoute("/feed.xml", Route(body: .bytes(Array("<rss/>".utf8)), faults: [.stallAfter(bytes: 0, seconds: 120, times: 100)]))
        let asked = server.requests(for: "/feed.xml").count
        _ = try await interrupt(["refresh"], in: folder, with: SIGINT) { server.requests(for: "/feed.xml").count > asked }
        _ = try await interrupt(["sync"], in: folder, with: SIGTERM) { server.requests(for: "/feed.xml").count > asked + 1 }
        // A fetch cut short by Ctrl-C is not the feed's failure.
        let listed = try await MonsoonProcess(["podcasts", "--json"], in: folder.path).finish()
        let podcast = try #require((try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]])?.first)
        #expect(podcast["lastError"] is NSNull, "\(listed.output)")
    }
}
