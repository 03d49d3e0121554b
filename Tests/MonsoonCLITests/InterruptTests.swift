import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI
import MonsoonPodcasts

/// Ctrl-C and SIGTERM end every command at once, also while a feed is being fetched from a
/// server that never answers: exit 130, "monsoon: interrupted", nothing half-stored.
@Suite struct InterruptTests {
    /// A listening socket that never accepts: connections open, and nothing ever comes back.
    final class SilentServer: Sendable {
        let fd: Int32
        let port: UInt16

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)   // close-on-exec: no child (nor another test's check) inherits it
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

        func stop() { close(fd) }
    }

    /// Starts `arguments`, waits until it is surely inside the fetch, sends `signal`, and expects
    /// it to end with 130 within a generous deadline (before, it sat there until the fetch timed out).
    private func interrupt(_ arguments: [String], in folder: Folder, with signal: Int32) async throws -> RunResult {
        let process = try MonsoonProcess(arguments, in: folder.path)
        try await Task.sleep(nanoseconds: 1_000_000_000)
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
        _ = try await interrupt(["add", feed], in: folder, with: SIGINT)
        _ = try await interrupt(["inspect", feed], in: folder, with: SIGTERM)
        _ = try await interrupt(["archive", feed, "-o", "A"], in: folder, with: SIGINT)
        try OPML.write([.init(title: "Silent", feedURL: URL(string: feed)!)]).write(toFile: folder.file("list.opml"), atomically: true, encoding: .utf8)
        _ = try await interrupt(["import", "list.opml"], in: folder, with: SIGTERM)
        let podcasts = try await MonsoonProcess(["podcasts", "--json"], in: folder.path).finish()
        #expect(podcasts.output == "[]\n", "nothing was subscribed: \(podcasts.output)")

        // A subscribed feed whose server stops answering mid-response.
        let items = "<item><title>One</title><guid>1</guid><enclosure url=\"\(server.url("/1.mp3").absoluteString)\" type=\"audio/mpeg\"/></item>"
        server.setRoute("/feed.xml", Route(body: .bytes(Array("<rss version=\"2.0\"><channel><title>Stalls</title>\(items)</channel></rss>".utf8)),
                                           contentType: "application/rss+xml"))
        let added = try await MonsoonProcess(["add", server.url("/feed.xml").absoluteString], in: folder.path).finish()
        #expect(added.status == 0, "\(added.errors)")
        server.setRoute("/feed.xml", Route(body: .bytes(Array("<rss/>".utf8)), faults: [.stallAfter(bytes: 0, seconds: 120, times: 100)]))
        _ = try await interrupt(["refresh"], in: folder, with: SIGINT)
        _ = try await interrupt(["sync"], in: folder, with: SIGTERM)
        // A fetch cut short by Ctrl-C is not the feed's failure.
        let listed = try await MonsoonProcess(["podcasts", "--json"], in: folder.path).finish()
        let podcast = try #require((try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]])?.first)
        #expect(podcast["lastError"] is NSNull, "\(listed.output)")
    }
}
