import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// A public feed's URLs (enclosures, redirects, transcripts) may not lead into this machine or
/// its network: refused, said, nothing kept, unless the user allows it. The feed is served on a
/// documentation address (198.51.100.7, public by its class) given to the loopback interface.
@Suite(.enabled(if: PublicLookingAddress.isAvailable, "adding an address to the loopback interface needs root with CAP_NET_ADMIN: skipped"))
struct PrivateAddressTests {
    static func serve(_ server: TestServer) -> String {
        let public_ = "http://\(PublicLookingAddress.address):\(server.port)"
        let loopback = "http://127.0.0.1:\(server.port)"
        for path in ["/ok.mp3", "/admin.mp3", "/admin2.mp3", "/x.mp3", "/y.mp3", "/admin/t.vtt"] {
            server.setRoute(path, Route(body: .bytes(Array("bytes of \(path)".utf8)), contentType: path.hasSuffix(".vtt") ? "text/vtt" : "audio/mpeg"))
        }
        server.setRoute("/redir.mp3", Route(body: .bytes([]), faults: [.redirect(to: loopback + "/admin2.mp3")]))
        let items = [("Public", public_ + "/ok.mp3"), ("Loopback", loopback + "/admin.mp3"), ("Number", "http://0x7f000001:\(server.port)/x.mp3"),
                     ("Scheme-relative", "//127.0.0.1:\(server.port)/y.mp3"), ("Redirected", public_ + "/redir.mp3")]
        var xml = ""
        for (index, (title, url)) in items.enumerated() {
            let transcript = index == 0 ? "<podcast:transcript url=\"\(loopback)/admin/t.vtt\" type=\"text/vtt\"/>" : ""
            xml += "<item><title>\(title)</title><guid>g\(index)</guid><pubDate>0\(index + 1) Mar 2024 10:00:00 GMT</pubDate>"
                + "<enclosure url=\"\(url)\" type=\"audio/mpeg\"/>\(transcript)</item>"
        }
        server.setRoute("/feed.xml", Route(body: .bytes(Array("""
            <?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Far Show</title>\(xml)</channel></rss>
            """.utf8)), contentType: "application/rss+xml"))
        return public_ + "/feed.xml"
    }

    @Test func aPublicFeedsURLsNeverReachThisMachine() async throws {
        let server = try TestServer(anyAddress: true)
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let feed = Self.serve(server)
        let run = await runMonsoon(["archive", feed, "-o", "A", "--with-transcripts"], in: folder.path)
        #expect(run.status == 1)
        #expect(folder.contents("A/Far Show").filter { $0.hasSuffix(".mp3") } == ["2024-03-01 - Public.mp3"])
        let asked = Set(server.requests.map(\.path))
        #expect(asked == ["/feed.xml", "/ok.mp3", "/redir.mp3"], "\(asked)")
        let refusals = (run.output + run.errors).split(separator: "\n").filter { $0.contains("refused to connect to 127.0.0.1") }
        #expect(refusals.count == 5, "four enclosures and the transcript: \(run.output) \(run.errors)")
        #expect(refusals.allSatisfy { $0.hasSuffix("; if you trust the feed, allow it with --allow-private or 'monsoon config set allow-private on'") })
    }

    @Test func allowedTheyAreFetched() async throws {
        let server = try TestServer(anyAddress: true)
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let feed = Self.serve(server)
        let run = await runMonsoon(["archive", feed, "-o", "A", "--with-transcripts", "--allow-private"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(folder.contents("A/Far Show").filter { $0.hasSuffix(".mp3") }.count == 5)
        // The setting does the same for every run.
        let other = Folder()
        defer { other.remove() }
        #expect(await runMonsoon(["config", "set", "allow-private", "on"], in: other.path).status == 0)
        let again = await runMonsoon(["archive", feed, "-o", "A"], in: other.path)
        #expect(again.status == 0, "\(again.errors)")
    }
}

/// 198.51.100.7 (TEST-NET-2, public by its class) on the loopback interface, once per process.
enum PublicLookingAddress {
    static let address = "198.51.100.7"
    static let isAvailable: Bool = {
        guard getuid() == 0 else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // Already there (another test process added it): as good.
        process.arguments = ["-c", "ip addr add \(address)/32 dev lo 2>/dev/null || ip addr show dev lo | grep -q ' \(address)/'"]
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()
}
