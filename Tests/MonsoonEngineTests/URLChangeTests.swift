import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// `changeURL(_:to:)` (a renewed link for the same resource keeps its part, and the validators
/// decide) and `replaceFailure(of:with:)`.
@Suite struct URLChangeTests {
    @Test func whatAChangeDoesByStatus() {
        #expect(URLChange.outcome(status: .failed, placing: false) == .queueAgain)
        #expect(URLChange.outcome(status: .downloading, placing: false) == .stopAndQueueAgain)
        #expect(URLChange.outcome(status: .downloading, placing: true) == .keepStatus)
        for status: DownloadStatus in [.queued, .waitingToRetry, .paused, .completed] {
            #expect(URLChange.outcome(status: status, placing: false) == .keepStatus)
        }
        let state = ResumeState(url: "http://h/a?sig=1", etag: "\"v\"", lastModified: nil, total: 10)
        #expect(URLChange.resumeState(state, from: "http://h/a?sig=1", to: "http://h/a?sig=2")
                == ResumeState(url: "http://h/a?sig=2", etag: "\"v\"", lastModified: nil, total: 10))
        #expect(URLChange.resumeState(state, from: "http://h/other", to: "http://h/a?sig=2") == state, "another URL's state is not adopted")
        #expect(URLChange.forgetsWhereItWasAnswered(status: .failed, placing: false))
        #expect(!URLChange.forgetsWhereItWasAnswered(status: .completed, placing: false))
        #expect(!URLChange.forgetsWhereItWasAnswered(status: .downloading, placing: true))
        #expect(URLChange.resumeState(nil, from: "http://h/a?sig=1", to: "http://h/a?sig=2") == nil)
        var record = DownloadRecord(request: request("a", URL(string: "http://old.example/a?sig=1")!, to: "/tmp/a"), sequence: 1, host: "old.example")
        record.resume = ResumeState(url: "http://old.example/a?sig=1", etag: "\"v\"", lastModified: nil, total: 10)
        record.finalURL = "https://cdn.example/a"
        record.answeredHost = "cdn.example"
        URLChange.apply(URL(string: "https://New.example:444/a?sig=2")!, to: &record)
        #expect(record.request.url.absoluteString == "https://New.example:444/a?sig=2" && record.host == "new.example:444" && record.urlChanged)
        #expect(record.resume?.url == "https://New.example:444/a?sig=2", "the part's bytes and validators are the new URL's")
        #expect(record.finalURL == nil && record.answeredHost == nil, "where the old URL was answered says nothing of the new one")
    }

    /// A part fetched from one link, refused later (403), goes on from the new link with Range, across
    /// a relaunch: the row and the part's attribute both name the new URL.
    @Test func aRefusedDownloadGoesOnFromItsNewURLWithRangeAcrossARelaunch() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let database = folder.file("queue.sqlite")
        let size = 1 << 20
        let body = Body.pattern(size: size, seed: 21)
        // Held mid-body until the test has paused it.
        server.setRoute("/old.mp3", Route(body: body, etag: "\"r1\"", gate: gate, gateAfter: 300_000))
        let path = folder.file("r.mp3")
        var partSize = 0
        do {
            let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database, watchesOtherProcesses: false)
            try await manager.enqueue(request("r", server.url("/old.mp3?sig=1"), to: path))
            try await eventually("some bytes on disk") { (try await manager.download(withID: "r")?.bytes ?? 0) > 100_000 }
            try await manager.pause("r")
            try await waitFor(manager, "r", .paused)
            partSize = PartFile.size(at: path + ".part") ?? 0
            // The link expires: the old URL is refused from now on.
            server.setRoute("/old.mp3", Route.html(status: 403, "<html>expired</html>"))
            try await manager.resume("r")
            let failed = try await waitFor(manager, "r", .failed)
            #expect(failed.lastError?.httpStatus == 403)
            #expect(PartFile.size(at: path + ".part") == partSize, "a refusal keeps the part")
            // The new link: its first use is after a relaunch (nothing starts here any more).
            await manager.setLimits(maxConcurrent: 0)
            try await manager.changeURL("r", to: server.url("/new.mp3?sig=2"))
            let changed = try #require(try await manager.download(withID: "r"))
            #expect(changed.status == .queued && changed.request.url == server.url("/new.mp3?sig=2"))
            await manager.shutdown()
        }
        #expect(PartFile.readState(at: path + ".part")?.url == server.url("/new.mp3?sig=2").absoluteString, "the part names its new origin")
        #expect(PartFile.readState(at: path + ".part")?.etag == "\"r1\"")
        let store = try DownloadStore(database: try Database(path: database))
        #expect(try store.database.scalarText("SELECT url FROM downloads WHERE id = 'r'") == server.url("/new.mp3?sig=2").absoluteString)

        server.setRoute("/new.mp3", Route(body: body, etag: "\"r1\""))
        server.resetStatistics()
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database, watchesOtherProcesses: false)
        try await waitFor(manager, "r", .completed)
        #expect(sha256(ofFile: path) == body.sha256Hex())
        let requests = server.requests(for: "/new.mp3")
        #expect(requests.count == 1)
        #expect(requests.first?.header("Range") == "bytes=\(partSize)-" && requests.first?.header("If-Range") == "\"r1\"")
        #expect(server.bodyBytesSent == size - partSize, "only the rest was fetched")
        #expect(server.requests(for: "/old.mp3").isEmpty)
        await manager.shutdown()
    }

    /// The new link serves another version (its ETag differs): If-Range does not match, and the
    /// part starts over from the 200; the file is the new version whole, never a splice.
    @Test func aNewURLServingAnotherVersionStartsThePartOver() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let old = Body.pattern(size: 1 << 20, seed: 22)
        let new = Body.pattern(size: 1 << 20, seed: 23)
        // Held mid-body: still running when its URL changes.
        server.setRoute("/a", Route(body: old, etag: "\"a1\"", gate: gate, gateAfter: 300_000))
        server.setRoute("/b", Route(body: new, etag: "\"b1\""))
        let manager = DownloadManager(configuration: fastConfiguration())
        let path = folder.file("v.bin")
        try await manager.enqueue(request("v", server.url("/a"), to: path))
        try await eventually("some bytes on disk") { (try await manager.download(withID: "v")?.bytes ?? 0) > 100_000 }
        // Changed while running: the attempt stops (part kept) and goes again from the new URL.
        try await manager.changeURL("v", to: server.url("/b"))
        try await waitFor(manager, "v", .completed)
        #expect(sha256(ofFile: path) == new.sha256Hex())
        let asked = try #require(server.requests(for: "/b").first)
        #expect(asked.header("Range") != nil && asked.header("If-Range") == "\"a1\"", "the part was offered, and refused by its validator")
        await manager.shutdown()
    }

    /// A running download moved to another host gives its slot back on the old one: a download
    /// waiting behind it for that host's only slot starts.
    @Test func aRunningDownloadMovedToAnotherHostFreesItsSlot() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let body = Body.pattern(size: 600_000, seed: 24)
        // Each answer held mid-body: x runs, on either host, until y has completed.
        server.setRoute("/x", Route(body: body, etag: "\"x\"", gate: gate, gateAfter: 100_000))
        server.setRoute("/y", Route(body: .bytes([7])))
        var configuration = fastConfiguration()
        configuration.maxDownloadsPerHost = 1
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(request("x", server.url("/x"), to: folder.file("x")))
        try await eventually("x under way") { (try await manager.download(withID: "x")?.bytes ?? 0) > 50_000 }
        try await manager.enqueue(request("y", server.url("/y"), to: folder.file("y")))
        // The same server under another name: another host to the engine.
        let elsewhere = try #require(URL(string: "http://localhost:\(server.port)/x"))
        try await manager.changeURL("x", to: elsewhere)
        try await waitFor(manager, "y", .completed)
        gate.open()
        try await waitFor(manager, "x", .completed)
        #expect(sha256(ofFile: folder.file("x")) == body.sha256Hex())
        await manager.shutdown()
    }

    @Test func aFailedDownloadWithoutAPartIsQueuedAgainWithFreshCountersAndBadURLsAreRefused() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/gone", Route.html(status: 410, "<html>gone</html>"))
        server.setRoute("/here", Route(body: .bytes([1, 2, 3])))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("g", server.url("/gone"), to: folder.file("g")))
        try await waitFor(manager, "g", .failed)
        await #expect(throws: DownloadManagerError.invalidRequest("g", "only http and https URLs can be downloaded; this one is file:")) {
            try await manager.changeURL("g", to: URL(string: "file:///etc/passwd")!)
        }
        await #expect(throws: DownloadManagerError.notFound("nope")) { try await manager.changeURL("nope", to: server.url("/here")) }
        try await manager.changeURL("g", to: server.url("/here"))
        let done = try await waitFor(manager, "g", .completed)
        #expect(done.attempts == 0 && done.request.url == server.url("/here"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.file("g"))) == Data([1, 2, 3]))
        await manager.shutdown()
    }

    @Test func aFailureTakesABetterReasonAndListenersHearIt() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/no", Route.html(status: 403, "<html>no</html>"))
        let manager = DownloadManager(configuration: fastConfiguration())
        let recorder = EventRecorder(manager)
        try await manager.enqueue(request("f", server.url("/no"), to: folder.file("f")))
        try await waitFor(manager, "f", .failed)
        let better = DownloadError(.httpStatus, "the server answered 403 Forbidden: the link has expired", httpStatus: 403)
        try await manager.replaceFailure(of: "f", with: better)
        #expect(try await manager.download(withID: "f")?.lastError == better)
        try await eventually("the new reason is heard") {
            recorder.all.contains { if case .statusChanged(let download) = $0 { download.lastError == better } else { false } }
        }
        // Retried (and held in line, so it cannot fail again meanwhile): no longer failed.
        await manager.setLimits(maxConcurrent: 0)
        try await manager.retry(["f"])
        await #expect(throws: DownloadManagerError.self) { try await manager.replaceFailure(of: "f", with: better) }
        await manager.shutdown()
    }
}
