import Foundation
import MonsoonTestServer
import Synchronization
import Testing

@Suite("Signed links that expire")
struct URLSigningTests {
    @Test func signedLinksWorkUntilTheyExpireAndAreFreshAtEachFetch() throws {
        let server = try TestServer()
        // The signer's time is the test's: links expire when it moves it, not after a wait.
        let time = ManualTime()
        let signing = URLSigning(lifetime: 2, clock: { time.now })
        let body = Body.pattern(size: 3000, seed: 4)
        server.setRoute("/m.mp3", Route(body: body, etag: "\"m\"", signing: signing))
        let media = server.url("/m.mp3")
        server.setRoute("/feed.xml", Route(body: .generated { Array(signing.sign(media).absoluteString.utf8) }))

        let first = try Curl.run([server.url("/feed.xml").absoluteString])
        let link = String(decoding: first.body, as: UTF8.self)
        #expect(link.hasPrefix(media.absoluteString + "?expires=") && link.contains("&sig="))
        #expect(first.headers["content-length"] == String(link.utf8.count))
        let ok = try Curl.run([link])
        #expect(ok.status == 200 && ok.body == body.data())
        // Ranges and If-Range work behind the signature as on any route.
        let ranged = try Curl.run(["-H", "Range: bytes=1000-", "-H", "If-Range: \"m\"", link])
        #expect(ranged.status == 206 && ranged.body == body.data().subdata(in: 1000..<3000))

        // Unsigned, forged or for another path: refused.
        #expect(try Curl.run([media.absoluteString]).status == 403)
        #expect(try Curl.run([link.replacingOccurrences(of: "sig=", with: "sig=0")]).status == 403)
        server.setRoute("/other.mp3", Route(body: body, signing: signing))
        #expect(try Curl.run([link.replacingOccurrences(of: "/m.mp3", with: "/other.mp3")]).status == 403)

        // Each fetch of the feed gives a link of its own time; an old one stops working once it expires.
        time.advance(by: 1.1)
        let second = String(decoding: try Curl.run([server.url("/feed.xml").absoluteString]).body, as: UTF8.self)
        #expect(second != link)
        #expect(try Curl.run([link]).status == 200, "not expired yet")
        time.advance(by: 1)   // past the first link's two seconds
        #expect(try Curl.run([link]).status == 403)
        #expect(try Curl.run([second]).status == 200, "the newer link still works")
    }
}

/// A clock the test moves, from a whole second (links expire on whole seconds).
final class ManualTime: Sendable {
    private let time = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    var now: Date { time.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        time.withLock { $0 += seconds }
    }
}
