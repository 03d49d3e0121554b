import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// Real libcurl transfers against the loopback test server.
@Suite struct TransferTests {
    @Test func completesWithTheRightBytes() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 3 << 20, seed: 1)
        let modified = Date(timeIntervalSince1970: 1_600_000_000)
        server.setRoute("/a.mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"a1\"", lastModified: modified))
        let manager = DownloadManager(configuration: fastConfiguration())
        let events = manager.events()
        try await manager.enqueue(request("a", server.url("/a.mp3"), to: folder.file("a.mp3"), mediaType: "audio/mpeg"))
        let done = try await waitFor(manager, "a", .completed)
        #expect(sha256(ofFile: folder.file("a.mp3")) == body.sha256Hex())
        #expect(done.bytes == 3 << 20 && done.total == 3 << 20 && done.progress == 1)
        #expect(folder.contents() == ["a.mp3"])
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.file("a.mp3"))
        #expect((attributes[.modificationDate] as? Date) == modified)

        // Events: added, then downloading, then completed, with progress in between.
        var statuses: [DownloadStatus] = []
        var sawAdded = false
        for await event in events {
            switch event {
            case .added: sawAdded = true
            case .statusChanged(let download): statuses.append(download.status)
            default: break
            }
            if statuses.last == .completed { break }
        }
        #expect(sawAdded)
        #expect(statuses == [.downloading, .completed])
        await manager.shutdown()
    }

    @Test func aDroppedConnectionResumesWithRangeAndFetchesOnlyTheRest() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let size = 2 << 20
        let body = Body.pattern(size: size, seed: 2)
        server.setRoute("/b.mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"b1\"", faults: [.dropAfter(bytes: 700_000, times: 1)]))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("b", server.url("/b.mp3"), to: folder.file("b.mp3")))
        let done = try await waitFor(manager, "b", .completed)
        #expect(sha256(ofFile: folder.file("b.mp3")) == body.sha256Hex())
        let requests = server.requests(for: "/b.mp3")
        #expect(requests.count == 2)
        #expect(requests[0].header("Range") == nil)
        #expect(requests[1].header("Range") == "bytes=700000-")
        #expect(requests[1].header("If-Range") == "\"b1\"")
        #expect(server.bodyBytesSent == size)
        #expect(done.attempts == 0, "an attempt that made progress does not count")
        await manager.shutdown()
    }

    @Test func pauseAndResumeDoNotStartOver() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let size = 1 << 20
        let body = Body.pattern(size: size, seed: 3)
        // Held mid-body until the test has paused it.
        server.setRoute("/c.mp3", Route(body: body, etag: "\"c1\"", gate: gate, gateAfter: 300_000))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("c", server.url("/c.mp3"), to: folder.file("c.mp3")))
        try await eventually("some bytes on disk") { (try await manager.download(withID: "c")?.bytes ?? 0) > 100_000 }
        try await manager.pause("c")
        let paused = try await waitFor(manager, "c", .paused)
        let partSize = PartFile.size(at: folder.file("c.mp3.part")) ?? 0
        #expect(partSize > 0 && partSize < size)
        #expect(!FileManager.default.fileExists(atPath: folder.file("c.mp3")))
        // The rest of the answer may go now: a transfer still running would write it.
        gate.open()
        try await eventually("the paused attempt's connection closed") { server.openConnections == 0 }
        _ = try await manager.counts()   // a turn of the loop since
        #expect(PartFile.size(at: folder.file("c.mp3.part")) == partSize, "nothing is written while paused")
        #expect(paused.bytes == partSize)
        server.setRoute("/c.mp3", Route(body: body, etag: "\"c1\""))
        try await manager.resume("c")
        try await waitFor(manager, "c", .completed)
        #expect(sha256(ofFile: folder.file("c.mp3")) == body.sha256Hex())
        let requests = server.requests(for: "/c.mp3")
        #expect(requests.count == 2)
        #expect(requests[1].header("Range") == "bytes=\(partSize)-")
        #expect(server.bodyBytesSent < size + partSize, "the resume fetched only the rest")
        await manager.shutdown()
    }

    @Test func aServerThatIgnoresRangeStillYieldsTheRightFile() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 1 << 20, seed: 4)
        server.setRoute("/d", Route(body: body, etag: "\"d1\"", supportsRanges: false, faults: [.dropAfter(bytes: 300_000, times: 1)]))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("d", server.url("/d"), to: folder.file("d.bin")))
        try await waitFor(manager, "d", .completed)
        #expect(sha256(ofFile: folder.file("d.bin")) == body.sha256Hex())
        let requests = server.requests(for: "/d")
        #expect(requests.count == 2)
        #expect(requests[1].header("Range") == "bytes=300000-")
        await manager.shutdown()
    }

    @Test func aChangedResourceRestartsAndYieldsTheNewFile() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let old = Body.pattern(size: 1 << 20, seed: 5)
        let new = Body.pattern(size: 1 << 20, seed: 6)
        // Held mid-body until the test has paused it.
        server.setRoute("/e", Route(body: old, etag: "\"old\"", gate: gate, gateAfter: 300_000))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("e", server.url("/e"), to: folder.file("e.bin")))
        try await eventually("some bytes") { (try await manager.download(withID: "e")?.bytes ?? 0) > 50_000 }
        try await manager.pause("e")
        try await waitFor(manager, "e", .paused)
        server.setRoute("/e", Route(body: new, etag: "\"new\""))
        try await manager.resume("e")
        try await waitFor(manager, "e", .completed)
        #expect(sha256(ofFile: folder.file("e.bin")) == new.sha256Hex())
        #expect(server.requests(for: "/e").last?.header("If-Range") == "\"old\"")
        await manager.shutdown()
    }

    @Test func a206FromAServerIgnoringIfRangeWithAnotherETagRestarts() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let old = Body.pattern(size: 600_000, seed: 7)
        let new = Body.pattern(size: 600_000, seed: 8)
        // The part claims to be from the old version; the server now serves ranges of the new one
        // without checking If-Range.
        let part = folder.file("f.bin.part")
        _ = FileManager.default.createFile(atPath: part, contents: old.data().prefix(200_000))
        let fd = open(part, O_WRONLY)
        PartFile.writeState(ResumeState(url: server.url("/f").absoluteString, etag: "\"old\"", lastModified: nil, total: 600_000), fd: fd)
        close(fd)
        server.setRoute("/f", Route(body: new, etag: "\"new\"", ignoresIfRange: true))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("f", server.url("/f"), to: folder.file("f.bin")))
        try await waitFor(manager, "f", .completed)
        #expect(sha256(ofFile: folder.file("f.bin")) == new.sha256Hex())
        let requests = server.requests(for: "/f")
        #expect(requests.first?.header("Range") == "bytes=200000-")
        #expect(requests.last?.header("Range") == nil)
        await manager.shutdown()
    }

    @Test func a416WithTheWholePartCompletes() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 100_000, seed: 9)
        let part = folder.file("g.bin.part")
        _ = FileManager.default.createFile(atPath: part, contents: body.data())
        let fd = open(part, O_WRONLY)
        PartFile.writeState(ResumeState(url: server.url("/g").absoluteString, etag: "\"g\"", lastModified: nil, total: nil), fd: fd)
        close(fd)
        server.setRoute("/g", Route(body: body, etag: "\"g\""))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("g", server.url("/g"), to: folder.file("g.bin")))
        try await waitFor(manager, "g", .completed)
        #expect(sha256(ofFile: folder.file("g.bin")) == body.sha256Hex())
        #expect(server.requests(for: "/g").count == 1)
        #expect(server.bodyBytesSent < 1000, "only the 416's small page, no payload")
        await manager.shutdown()
    }

    @Test func a416WithAStalePartRestarts() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 100_000, seed: 10)
        let part = folder.file("h.bin.part")
        _ = FileManager.default.createFile(atPath: part, contents: Data(count: 150_000))
        let fd = open(part, O_WRONLY)
        PartFile.writeState(ResumeState(url: server.url("/h").absoluteString, etag: "\"h\"", lastModified: nil, total: nil), fd: fd)
        close(fd)
        server.setRoute("/h", Route(body: body, etag: "\"h\""))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("h", server.url("/h"), to: folder.file("h.bin")))
        try await waitFor(manager, "h", .completed)
        #expect(sha256(ofFile: folder.file("h.bin")) == body.sha256Hex())
        let requests = server.requests(for: "/h")
        #expect(requests.count == 2)
        #expect(requests[0].header("Range") == "bytes=150000-")
        #expect(requests[1].header("Range") == nil)
        await manager.shutdown()
    }

    @Test func aPartWithoutKnownOriginIsNeverSplicedOnto() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 200_000, seed: 11)
        _ = FileManager.default.createFile(atPath: folder.file("i.bin.part"), contents: Data(repeating: 0xAA, count: 50_000))
        server.setRoute("/i", Route(body: body, etag: "\"i\""))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("i", server.url("/i"), to: folder.file("i.bin")))
        try await waitFor(manager, "i", .completed)
        #expect(sha256(ofFile: folder.file("i.bin")) == body.sha256Hex())
        #expect(server.requests(for: "/i").first?.header("Range") == nil)
        await manager.shutdown()
    }

    @Test func aTruncatedBodyIsRetried() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 500_000, seed: 12)
        server.setRoute("/j", Route(body: body, etag: "\"j\"", faults: [.shortBody(missing: 1000, times: 1)]))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("j", server.url("/j"), to: folder.file("j.bin")))
        try await waitFor(manager, "j", .completed)
        #expect(sha256(ofFile: folder.file("j.bin")) == body.sha256Hex())
        let requests = server.requests(for: "/j")
        #expect(requests.count == 2)
        #expect(requests[1].header("Range") == "bytes=499000-")
        await manager.shutdown()
    }

    @Test func aStalledTransferIsRetried() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 300_000, seed: 13)
        server.setRoute("/k", Route(body: body, etag: "\"k\"", faults: [.stallAfter(bytes: 100_000, seconds: 20, times: 1)]))
        // Slower than 200 kB/s for a second is a stall: curl averages the speed since the start (over
        // five seconds at most), which the first 100,000 bytes would keep above 1 kB/s for seconds.
        var configuration = fastConfiguration()
        configuration.stall = EngineConfiguration.Stall(bytesPerSecond: 200_000, seconds: 1)
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(request("k", server.url("/k"), to: folder.file("k.bin")))
        try await waitFor(manager, "k", .completed)
        #expect(sha256(ofFile: folder.file("k.bin")) == body.sha256Hex())
        #expect(server.requests(for: "/k").last?.header("Range") == "bytes=100000-")
        await manager.shutdown()
    }

    @Test func namesComeFromTheResponseForFolderDownloads() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/dl", Route(body: .bytes(Array("one".utf8)), contentDisposition: "attachment; filename=\"../../Show: Episode 1.mp3\""))
        server.setRoute("/files/two%20words.mp3", Route(body: .bytes(Array("two".utf8))))
        server.setRoute("/", Route(body: .bytes(Array("three".utf8))))
        server.setRoute("/same/x.mp3", Route(body: .bytes(Array("four".utf8))))
        server.setRoute("/other/x.mp3", Route(body: .bytes(Array("five".utf8))))
        let manager = DownloadManager(configuration: fastConfiguration())
        let out = folder.file("out")
        try await manager.enqueue(contentsOf: [
            DownloadRequest(id: "1", url: server.url("/dl"), destination: .directory(out)),
            DownloadRequest(id: "2", url: server.url("/files/two%20words.mp3"), destination: .directory(out)),
            DownloadRequest(id: "3", url: server.url("/"), destination: .directory(out)),
            DownloadRequest(id: "4", url: server.url("/same/x.mp3"), destination: .directory(out)),
            DownloadRequest(id: "5", url: server.url("/other/x.mp3"), destination: .directory(out)),
        ])
        for id in ["1", "2", "3", "4", "5"] { try await waitFor(manager, DownloadID(id), .completed) }
        let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(names == ["_._Show: Episode 1.mp3", "download", "two words.mp3", "x (2).mp3", "x.mp3"])
        #expect(try await manager.download(withID: "2")?.filePath == (out as NSString).appendingPathComponent("two words.mp3"))
        await manager.shutdown()
    }
}
