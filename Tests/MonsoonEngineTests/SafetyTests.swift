import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// Duplicates, removal, disk space, web pages and unsafe redirects.
@Suite struct SafetyTests {
    @Test func duplicatesAreRefusedUnlessReplacing() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a", Route(body: .bytes([1, 2, 3])))
        server.setRoute("/b", Route(body: .bytes([4, 5])))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("a", server.url("/a"), to: folder.file("a")))
        await #expect(throws: DownloadManagerError.duplicate("a")) {
            try await manager.enqueue(request("a", server.url("/b"), to: folder.file("b")))
        }
        await #expect(throws: DownloadManagerError.duplicate("z")) {
            try await manager.enqueue(contentsOf: [request("z", server.url("/a"), to: folder.file("z")), request("z", server.url("/a"), to: folder.file("z"))])
        }
        #expect(try await manager.download(withID: "z") == nil, "a refused batch adds nothing")
        try await waitFor(manager, "a", .completed)
        try await manager.enqueue(request("a", server.url("/b"), to: folder.file("b")), replacingExisting: true)
        let replaced = try await waitFor(manager, "a", .completed)
        #expect(replaced.request.url == server.url("/b"))
        #expect(try await manager.downloads.count == 1)
        await manager.shutdown()
    }

    @Test func onlyHTTPAndHTTPSCanBeEnqueued() async throws {
        let manager = DownloadManager(configuration: fastConfiguration())
        await #expect(throws: DownloadManagerError.self) {
            try await manager.enqueue(request("f", URL(string: "file:///etc/passwd")!, to: "/tmp/x"))
        }
        await #expect(throws: DownloadManagerError.self) {
            try await manager.enqueue(request("g", URL(string: "ftp://example.com/a")!, to: "/tmp/x"))
        }
        await manager.shutdown()
    }

    @Test func removalDeletesThePartAlwaysAndTheFileWhenAsked() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        server.setRoute("/done", Route(body: .bytes([1, 2, 3])))
        server.setRoute("/kept", Route(body: .bytes([4, 5, 6])))
        // Held mid-body: still running when it is removed.
        server.setRoute("/slow", Route(body: .pattern(size: 1 << 20, seed: 1), etag: "\"s\"", gate: gate, gateAfter: 300_000))
        let manager = DownloadManager(configuration: fastConfiguration())
        let events = manager.events()
        try await manager.enqueue(contentsOf: [
            request("done", server.url("/done"), to: folder.file("done")),
            request("kept", server.url("/kept"), to: folder.file("kept")),
            request("slow", server.url("/slow"), to: folder.file("slow")),
        ])
        try await waitFor(manager, "done", .completed)
        try await waitFor(manager, "kept", .completed)
        try await eventually("a part file") { PartFile.size(at: folder.file("slow.part")) ?? 0 > 0 }
        try await manager.remove("done", deleteFile: true)
        try await manager.remove("kept", deleteFile: false)
        try await manager.remove("slow", deleteFile: false)
        #expect(folder.contents() == ["kept"])
        #expect(try await manager.downloads.isEmpty)
        await #expect(throws: DownloadManagerError.notFound("done")) { try await manager.remove("done") }
        var removed: [DownloadID] = []
        for await event in events {
            if case .removed(let id) = event { removed.append(id) }
            if removed.count == 3 { break }
        }
        #expect(removed == ["done", "kept", "slow"])
        await manager.shutdown()
    }

    @Test func manyAreRemovedInOneCallAndTheMissingAreNamed() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a", Route(body: .bytes([1, 2, 3])))
        server.setRoute("/b", Route(body: .bytes([4, 5])))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(contentsOf: [request("a", server.url("/a"), to: folder.file("a")), request("b", server.url("/b"), to: folder.file("b"))])
        try await waitFor(manager, "a", .completed)
        try await waitFor(manager, "b", .completed)
        #expect(try await manager.remove(contentsOf: ["a", "nope"], deleteFile: false) == ["nope"])
        #expect(try await manager.remove(contentsOf: ["b", "a"], deleteFile: true) == ["a"], "removed already")
        #expect(folder.contents() == ["a"], "only the file of the removal that asked is deleted")
        #expect(try await manager.downloads.isEmpty)
        await manager.shutdown()
    }

    @Test func notEnoughDiskSpaceKeepsItQueuedWithoutAsking() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/big", Route(body: .pattern(size: 1000, seed: 1)))
        var configuration = fastConfiguration()
        configuration.diskReserve = Int.max / 4   // more than any disk has free
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(request("big", server.url("/big"), to: folder.file("big")))
        await manager.waitUntilIdle()
        // Not failed: it waits, queued, for room (a later run, or a retry, asks again).
        let waiting = try #require(try await manager.download(withID: "big"))
        #expect(waiting.status == .queued)
        #expect(waiting.lastError?.code == .notEnoughDiskSpace)
        #expect(waiting.lastError?.message.hasPrefix("not enough disk space on the disk holding \(folder.path): ") == true, "\(String(describing: waiting.lastError))")
        #expect(server.requests.isEmpty)
        #expect(folder.contents().isEmpty)
        await manager.shutdown()
    }

    @Test func aWebPageInsteadOfMediaFails() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/episode.mp3", Route(body: .bytes(Array("<html>Log in</html>".utf8)), contentType: "text/html; charset=utf-8"))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("w", server.url("/episode.mp3"), to: folder.file("episode.mp3"), mediaType: "audio/mpeg"))
        let failed = try await waitFor(manager, "w", .failed)
        #expect(failed.lastError?.code == .webPageNotMedia)
        #expect(failed.lastError?.message.contains("the server returned a web page, not media") == true)
        #expect(folder.contents().isEmpty)
        await manager.shutdown()
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1:21/x.mp3", "gopher://127.0.0.1:70/1x", "data:audio/mpeg;base64,SUQz", "dict://127.0.0.1/x"])
    func aRedirectToAnotherSchemeIsRefused(_ target: String) async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/evil", Route(body: .bytes([]), faults: [.redirect(to: target)]))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("evil", server.url("/evil"), to: folder.file("evil")))
        let failed = try await waitFor(manager, "evil", .failed)
        #expect(failed.lastError?.code == .unsupportedScheme)
        #expect(folder.contents().isEmpty)
        #expect(server.requests.count == 1, "refused at once, not retried")
        await manager.shutdown()
    }

    @Test func redirectsAreFollowedAndLoopsStopped() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/old", Route(body: .bytes([]), faults: [.redirect(to: "/new", status: 301)]))
        server.setRoute("/new", Route(body: .bytes([7, 7])))
        server.setRoute("/loop", Route(body: .bytes([]), faults: [.redirect(to: "/loop")]))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("moved", server.url("/old"), to: folder.file("moved")))
        try await manager.enqueue(request("loop", server.url("/loop"), to: folder.file("loop")))
        try await waitFor(manager, "moved", .completed)
        let failed = try await waitFor(manager, "loop", .failed)
        #expect(failed.lastError?.code == .tooManyRedirects)
        #expect(server.requests(for: "/loop").count == 11)
        #expect(folder.contents() == ["moved"])
        await manager.shutdown()
    }

    @Test func pauseAllAndResumeAll() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let bodies = (0..<3).map { Body.pattern(size: 1 << 20, seed: UInt64($0)) }
        // Each held mid-body: all three running at the pause.
        for (index, body) in bodies.enumerated() {
            server.setRoute("/\(index)", Route(body: body, etag: "\"\(index)\"", gate: gate, gateAfter: 300_000))
        }
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(contentsOf: (0..<3).map { request(DownloadID("\($0)"), server.url("/\($0)"), to: folder.file("\($0)")) })
        try await eventually("all started") { try await manager.downloads.allSatisfy { $0.bytes > 0 } }
        try await manager.pauseAll()
        let statuses = try await manager.downloads.map(\.status)
        #expect(statuses == [.paused, .paused, .paused])
        for (index, body) in bodies.enumerated() { server.setRoute("/\(index)", Route(body: body, etag: "\"\(index)\"")) }
        try await manager.resumeAll()
        await manager.waitUntilIdle()
        for (index, body) in bodies.enumerated() {
            #expect(sha256(ofFile: folder.file("\(index)")) == body.sha256Hex())
            #expect(server.requests(for: "/\(index)").last?.header("Range") != nil)
        }
        await manager.shutdown()
    }
}

/// No symbolic link below a download's root is followed when writing.
@Suite struct ConfinementTests {
    @Test func aFolderBelowTheRootThatIsALinkFailsTheDownloadAndNothingLandsOutside() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/e.mp3", Route(body: .bytes(Array("episode".utf8)), contentType: "audio/mpeg"))
        let root = folder.file("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.file("outside"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/Show", withDestinationPath: folder.file("outside"))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(DownloadRequest(id: "e", url: server.url("/e.mp3"), destination: .named(folder: root + "/Show/2024", stem: "One"), root: root))
        let failed = try await waitFor(manager, "e", .failed)
        #expect(failed.lastError?.message == "\(root)/Show is a symbolic link, and Monsoon never writes through one inside \(root): "
                + "replace it with a real folder or file (or remove it), then retry")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.file("outside"))) == [])
        // The root itself may be a link.
        try FileManager.default.removeItem(atPath: root + "/Show")
        try FileManager.default.createSymbolicLink(atPath: folder.file("linked-root"), withDestinationPath: root)
        try await manager.enqueue(DownloadRequest(id: "f", url: server.url("/e.mp3"), destination: .named(folder: folder.file("linked-root") + "/Show", stem: "One"),
                                                  root: folder.file("linked-root")))
        let done = try await waitFor(manager, "f", .completed)
        #expect(done.filePath == folder.file("linked-root") + "/Show/One.mp3")
        #expect(try String(contentsOfFile: root + "/Show/One.mp3", encoding: .utf8) == "episode")
        await manager.shutdown()
    }
}
