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

    /// Without following: the redirect is the answer (a cluster worker looks where a download
    /// would go before it connects there); with HEAD, no body either.
    @Test func aRedirectNotFollowedIsTheAnswer() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/temp", Route(body: .bytes([]), faults: [.redirect(to: "http://cdn.example.com/new.mp3", status: 302)]))
        server.setRoute("/direct", Route(body: .bytes(Array(repeating: 7, count: 1000))))
        let manager = DownloadManager(configuration: fastConfiguration())
        var request = FetchRequest(url: server.url("/temp"))
        request.followsRedirects = false
        request.headOnly = true
        let redirect = try await manager.fetch(request)
        #expect(redirect.status == 302 && redirect.header("Location") == "http://cdn.example.com/new.mp3" && redirect.redirects == [])
        request.url = server.url("/direct")
        let direct = try await manager.fetch(request)
        #expect(direct.status == 200 && direct.body.isEmpty)
        #expect(server.requests.map(\.method) == ["HEAD", "HEAD"], "nothing followed, no body asked for")
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

    /// A one-shot fetch of a host that refuses connections returns at once with the reason in plain
    /// words, although the engine's policy (five retries with backoff, half a minute) is in force.
    @Test func aOneShotFetchDoesNotRetryAnUnreachableHost() async throws {
        let refusing = try TestServer.refusingPort()
        defer { close(refusing.fd) }
        let url = URL(string: "http://127.0.0.1:\(refusing.port)/feed.xml")!
        let manager = DownloadManager()
        #expect(manager.configuration.retry.maxRetries == 5)
        let outcome = await finishing(within: 20) { () async -> Result<FetchResponse, DownloadError> in
            do throws(DownloadError) { return .success(try await manager.fetch(FetchRequest(url: url, retriesConnectionFailures: false))) } catch { return .failure(error) }
        }
        guard case .failure(let error)? = outcome else {
            Issue.record("expected a connection error, got \(String(describing: outcome))")
            await manager.shutdown()
            return
        }
        #expect(error.code == .network)
        #expect(error.message == "cannot connect to 127.0.0.1:\(refusing.port): connection refused; check the address and that the server is running")
        await manager.shutdown()
    }

    /// Fetches that keep the policy (a refresh of many feeds) retry the same failure.
    @Test func connectionFailuresAreRetriedByDefault() async throws {
        let refusing = try TestServer.refusingPort()
        defer { close(refusing.fd) }
        let manager = DownloadManager(configuration: fastConfiguration(retries: 2))
        do {
            _ = try await manager.fetch(FetchRequest(url: URL(string: "http://127.0.0.1:\(refusing.port)/feed.xml")!))
            Issue.record("a refused connection must fail")
        } catch {
            #expect(error.message == "cannot connect to 127.0.0.1:\(refusing.port): connection refused (retried twice: nothing answers there); "
                    + "check the address and that the server is running")
        }
        await manager.shutdown()
    }

    /// A download from a host that refuses every connection and has answered nothing gives up after two retries, not
    /// the policy's five (half a minute for `get`), and says it retried.
    @Test func aDownloadFromAHostThatNeverAnsweredIsRetriedTwice() async throws {
        let refusing = try TestServer.refusingPort()
        let folder = TemporaryFolder()
        defer { close(refusing.fd); folder.remove() }
        let manager = DownloadManager(configuration: fastConfiguration(retries: 5))
        try await manager.enqueue(request("r", URL(string: "http://127.0.0.1:\(refusing.port)/r.mp3")!, to: folder.file("r.mp3")))
        let failed = try await waitFor(manager, "r", .failed)
        #expect(failed.lastError?.message == "cannot connect to 127.0.0.1:\(refusing.port): connection refused "
                + "(retried twice: nothing answers there); check the address and that the server is running")
        await manager.shutdown()
    }

    @Test func unreachableHostsAreDescribedInPlainWords() {
        let url = URL(string: "https://user:secret@feeds.example.invalid/show.xml")
        #expect(FailureClassifier.connectionFailureText(code: 6, osErrno: 0, url: url)
                == "cannot connect to feeds.example.invalid:443: unknown host; check the address and the network")
        #expect(FailureClassifier.connectionFailureText(code: 7, osErrno: Int(ENETUNREACH), url: URL(string: "http://[::1]:8080/x"))
                == "cannot connect to [::1]:8080: network is unreachable; check the address and that the server is running")
        #expect(FailureClassifier.connectionFailureText(code: 28, osErrno: 0, url: url) == nil)
        #expect(FailureClassifier.curlFailure(code: 7, text: "x", stall: Stall(bytesPerSecond: 1024, seconds: 30)).isConnectionFailure)
        #expect(!FailureClassifier.curlFailure(code: 56, text: "x", stall: Stall(bytesPerSecond: 1024, seconds: 30)).isConnectionFailure)
    }

    /// A fetch's retry waits on the engine's clock, as a download's does: an hour's Retry-After
    /// passes when the test moves the clock, neither slept nor cut short.
    @Test func aRetryWaitsForTheEnginesClock() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/busy", Route(body: .bytes(Array("<rss/>".utf8)), faults: [.status(503, times: 1, retryAfter: "3600")]))
        let time = ManualClock()
        let manager = DownloadManager(configuration: Self.patient(time))
        let fetch = Task { try await manager.fetch(FetchRequest(url: server.url("/busy"))) }
        try await eventually("the fetch waits for its retry") { try await Self.waitingToRetry(manager) == 1 }
        // The loop turns; the engine's time does not reach the retry's: the fetch still waits (it
        // would have been sent in the turn that found it due).
        time.advance(by: 3599)
        _ = try await manager.counts()
        _ = try await manager.counts()
        #expect(try await Self.waitingToRetry(manager) == 1)
        #expect(server.requests(for: "/busy").count == 1, "not due yet: no second attempt")
        time.advance(by: 1)
        _ = try await manager.counts()   // a turn of the loop, which finds the retry due
        guard case .success(let response)? = await finishing(within: 30, { await fetch.result }) else {
            Issue.record("the retry did not answer once its time came")
            fetch.cancel()
            await manager.shutdown()
            return
        }
        #expect(response.status == 200 && String(decoding: response.body, as: UTF8.self) == "<rss/>")
        #expect(server.requests(for: "/busy").count == 2)
        await manager.shutdown()
    }

    /// A fetch waiting for its retry's time is cancelled at once, and never tried again.
    @Test func cancellingAFetchWaitingToRetryAnswersAtOnce() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/busy", Route(body: .bytes([1]), faults: [.status(503, times: 1, retryAfter: "3600")]))
        let time = ManualClock()
        let manager = DownloadManager(configuration: Self.patient(time))
        let fetch = Task { try await manager.fetch(FetchRequest(url: server.url("/busy"))) }
        try await eventually("the fetch waits for its retry") { try await Self.waitingToRetry(manager) == 1 }
        fetch.cancel()
        guard case .failure(let error as DownloadError)? = await finishing(within: 20, { await fetch.result }) else {
            Issue.record("a fetch waiting to retry did not answer its cancellation")
            await manager.shutdown()
            return
        }
        #expect(error.code == .cancelled)
        try await eventually("the waiting fetch was dropped") { try await Self.waitingToRetry(manager) == 0 }
        time.advance(by: 3600)
        _ = try await manager.counts()
        #expect(server.requests(for: "/busy").count == 1)
        await manager.shutdown()
    }

    /// `fastConfiguration` on `time`, waiting out a Retry-After of up to two hours.
    static func patient(_ time: ManualClock) -> EngineConfiguration {
        var configuration = fastConfiguration()
        configuration.clock = time.clock
        configuration.retry.maxDelay = 7200
        return configuration
    }

    /// The fetches the transfer thread holds until their retry's time.
    static func waitingToRetry(_ manager: DownloadManager) async throws -> Int {
        try await manager.perform(now: { .success($0.fetchesWaitingToRetry) })
    }

    @Test func cancellationEndsAFetch() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/slow", Route(body: .pattern(size: 1 << 20, seed: 1), gate: gate, gateAfter: 10_000))
        let manager = DownloadManager(configuration: fastConfiguration())
        let task = Task { try await manager.fetch(FetchRequest(url: server.url("/slow"))) }
        try await eventually("the answer under way") { server.bodyBytesSent >= 10_000 }
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
