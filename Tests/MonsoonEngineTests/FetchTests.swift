import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// The in-memory fetch used for feeds.
@Suite struct FetchTests {
    @Test func fetchesABodyWithHeaders() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/feed.xml", Route(body: .bytes(Array("<rss/>".utf8)), contentType: "application/rss+xml", etag: "\"f1\""))
        let manager = DownloadManager(configuration: fastConfiguration())
        let response = try await manager.fetch(FetchRequest(url: server.url("/feed.xml"), headers: ["User-Agent": "Test/1"]))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "<rss/>")
        #expect(response.header("etag") == "\"f1\"")
        #expect(response.redirects.isEmpty)
        #expect(server.requests.first?.header("User-Agent") == "Test/1")
        #expect(server.requests.first?.header("Accept-Encoding")?.contains("gzip") == true)

        let again = try await manager.fetch(FetchRequest(url: server.url("/feed.xml"), headers: ["If-None-Match": "\"f1\""]))
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        await manager.shutdown()
    }

    @Test func retriesTransientStatusesAndReportsOthers() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/flaky", Route(body: .bytes([1]), faults: [.status(503, times: 2)]))
        server.setRoute("/missing", Route.html(status: 404, "<html>no</html>"))
        let manager = DownloadManager(configuration: fastConfiguration())
        #expect(try await manager.fetch(FetchRequest(url: server.url("/flaky"))).status == 200)
        #expect(server.requests(for: "/flaky").count == 3)
        #expect(try await manager.fetch(FetchRequest(url: server.url("/missing"))).status == 404)
        #expect(server.requests(for: "/missing").count == 1)
        await manager.shutdown()
    }

    @Test func permanentRedirectsAreReported() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/old", Route(body: .bytes([]), faults: [.redirect(to: "/new", status: 301)]))
        server.setRoute("/temp", Route(body: .bytes([]), faults: [.redirect(to: "/new", status: 302)]))
        server.setRoute("/new", Route(body: .bytes([1])))
        let manager = DownloadManager(configuration: fastConfiguration())
        let moved = try await manager.fetch(FetchRequest(url: server.url("/old")))
        #expect(moved.redirects == [301] && moved.isPermanentlyRedirected)
        #expect(moved.finalURL == server.url("/new"))
        let temporary = try await manager.fetch(FetchRequest(url: server.url("/temp")))
        #expect(temporary.redirects == [302] && !temporary.isPermanentlyRedirected)
        await manager.shutdown()
    }

    @Test func aBodyOverTheCapFails() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/huge", Route(body: .pattern(size: 200_000, seed: 1)))
        let manager = DownloadManager(configuration: fastConfiguration())
        await #expect(throws: DownloadError.self) {
            _ = try await manager.fetch(FetchRequest(url: server.url("/huge"), maxBytes: 100_000))
        }
        do {
            _ = try await manager.fetch(FetchRequest(url: server.url("/huge"), maxBytes: 100_000))
        } catch {
            #expect(error.code == .tooLarge)
        }
        await manager.shutdown()
    }

    @Test func unsafeSchemesAreRefused() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/evil", Route(body: .bytes([]), faults: [.redirect(to: "file:///etc/passwd")]))
        let manager = DownloadManager(configuration: fastConfiguration())
        do {
            _ = try await manager.fetch(FetchRequest(url: server.url("/evil")))
            Issue.record("a redirect to file:// must fail")
        } catch {
            #expect(error.code == .unsupportedScheme)
        }
        await manager.shutdown()
    }

    @Test func cancellationEndsAFetch() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/slow", Route(body: .pattern(size: 1 << 20, seed: 1), throttle: 10_000))
        let manager = DownloadManager(configuration: fastConfiguration())
        let task = Task { try await manager.fetch(FetchRequest(url: server.url("/slow"))) }
        try await eventually("the request arrived") { !server.requests.isEmpty }
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result, let downloadError = error as? DownloadError else {
            Issue.record("expected a cancellation error")
            return
        }
        #expect(downloadError.code == .cancelled)
        await manager.shutdown()
    }
}
