import Foundation
import MonsoonTestServer
import Testing

@Suite("Fault injection")
struct FaultTests {
    @Test func statusWithRetryAfterThenSuccess() throws {
        let server = try TestServer()
        server.setRoute("/s", Route(body: .bytes(Array("ok".utf8)), faults: [.status(503, times: 1, retryAfter: "2")]))
        let url = server.url("/s").absoluteString

        let first = try Curl.run([url])
        #expect(first.status == 503)
        #expect(first.headers["retry-after"] == "2")
        #expect(first.headers["content-type"]?.hasPrefix("text/html") == true)

        let second = try Curl.run([url])
        #expect(second.status == 200)
        #expect(second.body == Data("ok".utf8))
    }

    @Test func faultsApplyInOrderThenRunOut() throws {
        let server = try TestServer()
        let body = Body.pattern(size: 5000, seed: 5)
        let route = Route(body: body, faults: [.status(503, times: 2), .dropAfter(bytes: 1000, times: 1)])
        server.setRoute("/f", route)
        let url = server.url("/f").absoluteString

        #expect(try Curl.run([url]).status == 503)
        #expect(try Curl.run([url]).status == 503)
        let dropped = try Curl.run([url])
        #expect(dropped.exitCode == 18)  // CURLE_PARTIAL_FILE
        #expect(dropped.body.count == 1000)
        #expect(try Curl.run([url]).body == body.data())

        // Setting the route again resets its fault counts.
        server.setRoute("/f", route)
        #expect(try Curl.run([url]).status == 503)
    }

    @Test func dropAfterCountsBytesOfTheRange() throws {
        let server = try TestServer()
        let body = Body.pattern(size: 100_000, seed: 6)
        server.setRoute("/d", Route(body: body, faults: [.dropAfter(bytes: 1000, times: 1)]))

        let dropped = try Curl.run(["-r", "50000-", server.url("/d").absoluteString])
        #expect(dropped.exitCode == 18)
        #expect(dropped.status == 206)
        #expect(dropped.body == body.data()[50000..<51000])
        #expect(server.bodyBytesSent == 1000)

        server.resetStatistics()
        #expect(server.bodyBytesSent == 0)
        #expect(server.requests.isEmpty)
    }

    @Test func shortBody() throws {
        let server = try TestServer()
        let body = Body.pattern(size: 10_000, seed: 8)
        server.setRoute("/s", Route(body: body, faults: [.shortBody(missing: 10, times: 1)]))
        let result = try Curl.run([server.url("/s").absoluteString])
        #expect(result.exitCode == 18)
        #expect(result.headers["content-length"] == "10000")
        #expect(result.body == body.data()[0..<9990])
        #expect(server.bodyBytesSent == 9990)
    }

    @Test func stallThenClose() throws {
        let server = try TestServer()
        server.setRoute("/s", Route(body: .pattern(size: 10_000, seed: 1), faults: [.stallAfter(bytes: 500, seconds: 0.4, times: 1)]))
        let started = Date()
        let result = try Curl.run([server.url("/s").absoluteString])
        #expect(Date().timeIntervalSince(started) >= 0.35)
        #expect(result.exitCode == 18)
        #expect(result.body.count == 500)
    }

    @Test func stallGivesUpWhenTheClientDoes() throws {
        let server = try TestServer()
        server.setRoute("/s", Route(body: .pattern(size: 10_000, seed: 1), faults: [.stallAfter(bytes: 500, seconds: 60, times: 1)]))
        let result = try Curl.run([server.url("/s").absoluteString], maxTime: 1)
        #expect(result.exitCode == 28)  // CURLE_OPERATION_TIMEDOUT
        // The server notices the hang-up instead of sleeping out the stall.
        #expect(eventually(timeout: 3) { server.openConnections == 0 })
    }

    @Test func redirect() throws {
        let server = try TestServer()
        server.setRoute("/r", Route(body: .bytes([1]), faults: [.redirect(to: "file:///etc/passwd")]))
        server.setRoute("/p", Route(body: .bytes([1]), faults: [.redirect(to: "/r", status: 308)]))

        for _ in 0..<2 {  // redirects never run out
            let result = try Curl.run([server.url("/r").absoluteString])
            #expect(result.status == 302)
            #expect(result.headers["location"] == "file:///etc/passwd")
        }
        let permanent = try Curl.run([server.url("/p").absoluteString])
        #expect(permanent.status == 308)
        #expect(permanent.headers["location"] == "/r")
    }

    @Test func throttledResponseTakesItsTime() throws {
        let server = try TestServer()
        let body = Body.pattern(size: 20_000, seed: 3)
        server.setRoute("/t", Route(body: body, throttle: 40_000))
        let started = Date()
        let result = try Curl.run([server.url("/t").absoluteString])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.body == body.data())
        #expect(elapsed >= 0.4, "20,000 bytes at 40,000 a second take at least half a second")
    }
}
