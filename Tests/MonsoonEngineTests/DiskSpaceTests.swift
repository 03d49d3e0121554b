import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// The disk reserve holds during transfers, and downloads start only when they fit: on small
/// tmpfs disks (mounting needs root with CAP_SYS_ADMIN, as `make test` has in CI).
@Suite(.enabled(if: Tmpfs.canMount, "mounting a tmpfs is not permitted here (it needs root with CAP_SYS_ADMIN): disk-space tests skipped"))
struct DiskSpaceTests {
    /// A body with no length that never seems to end stops before it eats into the reserve:
    /// queued again with "not enough disk space", its part kept, the reserve still free.
    @Test func anEndlessBodyStopsAtTheReserveAndKeepsThePart() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let disk = try MountedTmpfs(at: folder.file("disk"), megabytes: 16)
        defer { disk.unmount(); folder.remove(); server.stop() }
        server.setRoute("/stream", Route(body: .pattern(size: 1 << 30, seed: 5), contentType: "audio/mpeg", sendsContentLength: false))
        var configuration = fastConfiguration()
        configuration.diskReserve = 6 << 20
        let manager = DownloadManager(configuration: configuration)
        let destination = disk.file("stream.mp3")
        try await manager.enqueue(request("s", server.url("/stream"), to: destination))
        await manager.waitUntilIdle()
        let download = try #require(try await manager.download(withID: "s"))
        #expect(download.status == .queued)
        #expect(download.lastError?.code == .notEnoughDiskSpace)
        let message = download.lastError?.message ?? ""
        #expect(message.hasPrefix("not enough disk space on the disk holding \(disk.path):") && message.contains("the part kept"), "\(message)")
        let part = PartFile.size(at: PartFile.path(for: destination)) ?? 0
        #expect(part > 4 << 20, "the bytes received are kept: \(part)")
        #expect(disk.freeBytes >= 6 << 20, "the reserve is still free: \(disk.freeBytes)")
        await manager.shutdown()
    }

    /// Five files that each need 1.5 MiB on a 5 MiB disk, five at once: the three that fit run
    /// and complete; the other two wait, queued, unasked for, with the reason. When the disk has
    /// room again, they go on by themselves.
    @Test func onlyWhatFitsStartsAndTheRestWaitsForRoom() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let disk = try MountedTmpfs(at: folder.file("disk"), megabytes: 5)
        let gate = Gate()
        defer { gate.open(); disk.unmount(); folder.remove(); server.stop() }
        let body = Body.pattern(size: 1_536 << 10, seed: 9)
        // Every answer held until the test has seen which start.
        for index in 1...5 { server.setRoute("/e\(index).mp3", Route(body: body, gate: gate)) }
        // The disk is measured again when the test moves the clock.
        let time = ManualClock()
        var configuration = fastConfiguration(concurrency: 5)
        configuration.clock = time.clock
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(contentsOf: (1...5).map { index in
            DownloadRequest(id: DownloadID("e\(index)"), url: server.url("/e\(index).mp3"), destination: .file(disk.file("e\(index).mp3")),
                            expectedSize: body.count)
        })
        try await eventually("three asked for, two waiting for room") {
            var waiting = 0
            for index in 1...5 where try await manager.download(withID: DownloadID("e\(index)"))?.lastError?.code == .notEnoughDiskSpace { waiting += 1 }
            return server.requests.count == 3 && waiting == 2
        }
        gate.open()
        await manager.waitUntilIdle()
        var completed: [DownloadID] = []
        var waiting: [DownloadID] = []
        for index in 1...5 {
            let download = try #require(try await manager.download(withID: DownloadID("e\(index)")))
            switch download.status {
            case .completed: completed.append(download.id)
            case .queued where download.lastError?.code == .notEnoughDiskSpace: waiting.append(download.id)
            default: Issue.record("e\(index) is \(download.status): \(String(describing: download.lastError))")
            }
        }
        #expect(completed.count == 3 && waiting.count == 2, "completed \(completed), waiting \(waiting)")
        // Deferred while the others wrote; with the disk to itself each was asked for once (the
        // feed's length is only a hint), refused on the server's length, and nothing written.
        for id in waiting {
            #expect(server.requests(for: "/\(id.rawValue).mp3").count <= 1, "\(id) asked for at most once")
            #expect((PartFile.size(at: PartFile.path(for: disk.file("\(id.rawValue).mp3"))) ?? 0) == 0, "nothing of \(id) written")
        }
        for id in completed { #expect(sha256(ofFile: disk.file("\(id.rawValue).mp3")) == body.sha256Hex()) }

        // Room again (two files moved away): the waiting ones go on by themselves, once the disk is
        // measured again.
        for id in completed.prefix(2) { try FileManager.default.removeItem(atPath: disk.file("\(id.rawValue).mp3")) }
        time.advance(by: SpacePolicy.measureInterval)
        _ = try await manager.counts()   // a turn of the loop, which finds the measurement due
        for id in waiting {
            let done = try await waitFor(manager, id, .completed, seconds: 30)
            #expect(done.lastError == nil, "no longer waiting for room: \(String(describing: done.lastError))")
        }
        for id in waiting { #expect(sha256(ofFile: disk.file("\(id.rawValue).mp3")) == body.sha256Hex()) }
        await manager.shutdown()
    }

    /// A download refused on the length its response gave waits for that much room: it is not
    /// asked for again and again while another download runs on the same disk.
    @Test func aDownloadRefusedOnItsLengthIsNotAskedForAgainUntilItFits() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let disk = try MountedTmpfs(at: folder.file("disk"), megabytes: 5)
        let gate = Gate()
        defer { gate.open(); disk.unmount(); folder.remove(); server.stop() }
        let big = Body.pattern(size: 3 << 20, seed: 21)
        // Held mid-body while the disk is measured again and again.
        server.setRoute("/a.mp3", Route(body: big, gate: gate, gateAfter: 1 << 20))
        server.setRoute("/b.mp3", Route(body: .pattern(size: 3 << 20, seed: 22)))
        let time = ManualClock()
        var configuration = fastConfiguration(concurrency: 2)
        configuration.clock = time.clock
        let manager = DownloadManager(configuration: configuration)
        let recorder = EventRecorder(manager)
        try await manager.enqueue(request("a", server.url("/a.mp3"), to: disk.file("a.mp3")))
        // Its part on disk (the engine's progress figures wait for its clock).
        try await eventually("a under way") { (PartFile.size(at: PartFile.path(for: disk.file("a.mp3"))) ?? 0) > 0 }
        try await manager.enqueue(request("b", server.url("/b.mp3"), to: disk.file("b.mp3")))
        try await eventually("b refused on its length") { try await manager.download(withID: "b")?.lastError?.code == .notEnoughDiskSpace }
        // Three measurements of the disk while a runs: each lands, and b is not asked for again.
        for _ in 0..<3 {
            time.advance(by: SpacePolicy.measureInterval)
            _ = try await manager.counts()   // a turn of the loop, which asks for the measurement
            try await eventually("the disk measured") {
                let measurements = try await manager.peek { $0.diskMeasurements }
                return measurements.underWay == 0 && measurements.latest == time.now
            }
            _ = try await manager.counts()   // and a turn after it landed, which would start b
            #expect(recorder.statuses(of: "b").filter { $0 == .downloading }.count == 1, "\(recorder.statuses(of: "b"))")
        }
        gate.open()
        await manager.waitUntilIdle()
        #expect(try await manager.download(withID: "a")?.status == .completed)
        let b = try #require(try await manager.download(withID: "b"))
        #expect(b.status == .queued && b.lastError?.code == .notEnoughDiskSpace && b.total == 3 << 20)
        #expect(server.requests(for: "/b.mp3").count == 1, "asked for once, then held for its 3 MiB")
        await manager.shutdown()
    }

    /// Sizes known only from the responses: all five start, but once a length is known, a
    /// download that does not fit beside the others stops before writing, and waits.
    @Test func aLengthThatDoesNotFitBesideTheRunningDownloadsWaits() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let disk = try MountedTmpfs(at: folder.file("disk"), megabytes: 5)
        let gate = Gate()
        defer { gate.open(); disk.unmount(); folder.remove(); server.stop() }
        let body = Body.pattern(size: 1_536 << 10, seed: 11)
        // Every answer held mid-body: all five running when their lengths come.
        for index in 1...5 { server.setRoute("/e\(index).mp3", Route(body: body, gate: gate, gateAfter: 64 << 10)) }
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 5))
        try await manager.enqueue(contentsOf: (1...5).map { index in
            request(DownloadID("e\(index)"), server.url("/e\(index).mp3"), to: disk.file("e\(index).mp3"))
        })
        try await eventually("all five asked for, two stopped for room") {
            var waiting = 0
            for index in 1...5 where try await manager.download(withID: DownloadID("e\(index)"))?.lastError?.code == .notEnoughDiskSpace { waiting += 1 }
            return server.requests.count == 5 && waiting == 2
        }
        gate.open()
        await manager.waitUntilIdle()
        var statuses: [DownloadStatus] = []
        for index in 1...5 { statuses.append(try await manager.download(withID: DownloadID("e\(index)"))?.status ?? .failed) }
        #expect(statuses.filter { $0 == .completed }.count == 3, "\(statuses)")
        #expect(statuses.filter { $0 == .queued }.count == 2, "\(statuses)")
        for index in 1...5 where statuses[index - 1] == .completed {
            #expect(sha256(ofFile: disk.file("e\(index).mp3")) == body.sha256Hex())
        }
        await manager.shutdown()
    }
}

/// A tmpfs mounted for a test.
final class MountedTmpfs: Sendable {
    let path: String

    init(at path: String, megabytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]
        try mount.run()
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else { throw Timeout(description: "could not mount a tmpfs at \(path)") }
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    var freeBytes: Int { FileSystem.freeSpace(at: path) ?? 0 }

    func unmount() {
        let umount = Process()
        umount.executableURL = URL(fileURLWithPath: "/bin/umount")
        umount.arguments = [path]
        try? umount.run()   // the folder goes next; nothing to keep if this fails
        umount.waitUntilExit()
    }
}

/// Deletions inside a root never follow a link.
@Suite struct ConfinedRemovalTests {
    @Test func aPartBehindAFolderThatIsALinkIsNotRemoved() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let root = folder.file("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.file("outside"), withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: folder.file("outside/e.mp3.part")))
        try FileManager.default.createSymbolicLink(atPath: root + "/Show", withDestinationPath: folder.file("outside"))
        PartFile.remove(root + "/Show/e.mp3.part", root: root)
        #expect(FileManager.default.fileExists(atPath: folder.file("outside/e.mp3.part")), "not removed through the link")
        #expect(throws: DownloadError.self) { try ConfinedFolder.open(folder.file("outside"), root: root, create: false) }
        #expect(throws: DownloadError.self) { try ConfinedFolder.open(root + "/../outside", root: root, create: false) }
    }
}
