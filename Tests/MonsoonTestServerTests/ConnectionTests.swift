import Foundation
import MonsoonTestServer
import Testing

@Suite("Connections, recording and lifecycle")
struct ConnectionTests {
    @Test func recordsRequestsAndKeepAliveConnections() throws {
        let server = try TestServer()
        server.setRoute("/one", Route(body: .bytes([1])))
        server.setRoute("/two", Route(body: .bytes([2])))

        // One curl invocation with two URLs reuses its connection.
        let result = try Curl.run(["-H", "X-Test-Header: Hello", server.url("/one?q=1").absoluteString,
                                   "-o", "/dev/null", server.url("/two").absoluteString])
        #expect(result.exitCode == 0)
        let requests = server.requests
        try #require(requests.count == 2)
        #expect(requests[0].method == "GET")
        #expect(requests[0].path == "/one?q=1")
        #expect(requests[1].path == "/two")
        #expect(requests[0].headers["x-test-header"] == "Hello")
        #expect(requests[0].header("X-TEST-HEADER") == "Hello")
        #expect(requests[0].header("user-agent")?.hasPrefix("curl/") == true)
        #expect(requests[0].connectionID == requests[1].connectionID)
        #expect(requests[0].time <= requests[1].time)
        #expect(server.requests(for: "/one").count == 1)
        #expect(server.requests(for: "/one?q=1").count == 1)

        // Another process means another connection.
        _ = try Curl.run([server.url("/one").absoluteString])
        #expect(server.requests(for: "/one").map(\.connectionID).count == 2)
        #expect(server.requests(for: "/one")[1].connectionID != requests[0].connectionID)

        // Connection: close is honoured.
        let closing = try Curl.run(["-H", "Connection: close", server.url("/one").absoluteString])
        #expect(closing.headers["connection"] == "close")
    }

    @Test func maxConcurrentRequests() throws {
        let server = try TestServer()
        // Every answer held until all four clients have asked: they overlap however busy the machine.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/slow", Route(body: .pattern(size: 18_000, seed: 1), gate: gate))
        let clients = try (0..<4).map { _ in try Curl.start(["-o", "/dev/null", server.url("/slow").absoluteString]) }
        #expect(eventually(timeout: 20) { server.requests.count == 4 })
        gate.open()
        for client in clients { client.waitUntilExit() }
        #expect(clients.allSatisfy { $0.terminationStatus == 0 })
        #expect(server.maxConcurrentRequests == 4)
        #expect(server.bodyBytesSent == 72_000)

        // The clients have exited; the server may still be closing their connections.
        let deadline = Date().addingTimeInterval(5)
        while server.openConnections > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        server.resetStatistics()
        #expect(server.maxConcurrentRequests == 0)
    }

    @Test func manyConnectionsAndRequests() throws {
        let server = try TestServer()
        server.setRoute("/small", Route(body: .pattern(size: 1000, seed: 1)))
        let perClient = 100
        // Half the clients keep their connection alive, half open one per request.
        let clients = try (0..<16).map { index in
            try Curl.start((index % 2 == 0 ? [] : ["-H", "Connection: close"]) + ["http://127.0.0.1:\(server.port)/small?i=[1-\(perClient)]"])  // a curl URL glob
        }
        for client in clients { client.waitUntilExit() }
        #expect(clients.allSatisfy { $0.terminationStatus == 0 })
        #expect(server.requests.count == 16 * perClient)
        #expect(server.bodyBytesSent == 16 * perClient * 1000)
        #expect(Set(server.requests.map(\.connectionID)).count == 8 + 8 * perClient)
        #expect(server.maxConcurrentRequests >= 1 && server.maxConcurrentRequests <= 16)
        #expect(eventually { server.openConnections == 0 })
        #expect(eventually { serverThreads(port: server.port) == 1 })  // only the accept thread is left

        server.stop()
        #expect(eventually(timeout: 1) { serverThreads(port: server.port) == 0 })
    }

    @Test func stopIsPromptDuringStallAndIdempotent() throws {
        let server = try TestServer()
        // A stall of an hour: a stop that waited for it would never end in the deadline below.
        server.setRoute("/stall", Route(body: .pattern(size: 10_000, seed: 1), faults: [.stallAfter(bytes: 100, seconds: 3_600, times: 1)]))
        let dir = FileManager.default.temporaryDirectory.path
        let output = dir + "/stall-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let client = try Curl.start(["-o", output, server.url("/stall").absoluteString])
        #expect(eventually { server.bodyBytesSent == 100 })
        #expect(server.openConnections == 1)

        let stopped = DispatchSemaphore(value: 0)
        Thread {
            server.stop()
            stopped.signal()
        }.start()
        #expect(stopped.wait(timeout: .now() + 60) == .success, "stop() returned during the stall")
        server.stop()
        client.waitUntilExit()
        #expect(client.terminationStatus == 18)
        #expect(eventually(timeout: 30) { serverThreads(port: server.port) == 0 })
        #expect(server.openConnections == 0)
    }

    @Test func deinitStopsTheServer() throws {
        var server: TestServer? = try TestServer()
        let port = server!.port
        server!.setRoute("/x", Route(body: .bytes([1])))
        #expect(try Curl.run([server!.url("/x").absoluteString]).status == 200)
        server = nil
        #expect(eventually(timeout: 1) { serverThreads(port: port) == 0 })
        let refused = try Curl.run(["http://127.0.0.1:\(port)/x"])
        #expect(refused.exitCode == 7)  // CURLE_COULDNT_CONNECT
    }

    @Test func fixedPortAndPortInUse() throws {
        let first = try TestServer()
        #expect(first.port > 0)
        #expect(first.url("/a?b=c").absoluteString == "http://127.0.0.1:\(first.port)/a?b=c")
        #expect(throws: TestServerError.self) { try TestServer(port: first.port) }
        let port = first.port
        first.stop()
        // SO_REUSEADDR: the port can be bound again right away.
        let second = try TestServer(port: port)
        #expect(second.port == port)
    }
}

/// Threads of the server on `port` that are still alive (they are named "srv<port>-…").
/// `stop()` joins its threads, but the kernel can list a joined thread in /proc for a moment
/// longer, hence the `eventually` around checks for zero.
func serverThreads(port: Int) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
        let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        return name.hasPrefix("srv\(port)-")
    }.count
}
