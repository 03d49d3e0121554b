import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// A real ENOSPC: a 4 MiB tmpfs that the test fills up during a download.
/// Mounting needs root with CAP_SYS_ADMIN, as `make test` has in CI; where the machine does
/// not allow it, the suite is skipped and says why.
@Suite(.enabled(if: Tmpfs.canMount, "mounting a tmpfs is not permitted here (it needs root with CAP_SYS_ADMIN): full-disk tests skipped"))
struct DiskFullTests {

    @Test func aFullDiskHoldsTheDownloadWithTheReasonKeepsThePartAndRetryResumes() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let mounted = try MountedTmpfs(at: folder.file("disk"), megabytes: 4)
        let disk = mounted.path
        let gate = Gate()
        defer { gate.open(); mounted.unmount(); folder.remove(); server.stop() }
        let body = Body.pattern(size: 3 << 20, seed: 77)
        // Held mid-body until the disk is full: the rest then finds no room.
        server.setRoute("/big", Route(body: body, etag: "\"big\"", gate: gate, gateAfter: 400_000))
        let manager = DownloadManager(configuration: fastConfiguration())
        let destination = (disk as NSString).appendingPathComponent("big.bin")
        try await manager.enqueue(request("big", server.url("/big"), to: destination))
        try await eventually("some bytes on the small disk") { (try await manager.download(withID: "big")?.bytes ?? 0) > 300_000 }
        // Fill what is left, so the next write fails with ENOSPC.
        let filler = (disk as NSString).appendingPathComponent("filler")
        let fd = open(filler, O_WRONLY | O_CREAT, 0o644)
        let chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
        gate.open()

        // Not failed: queued again, waiting for room, with the reason.
        let held = try await waitFor(manager, "big", "queued, waiting for room") { $0.status == .queued && $0.lastError?.code == .notEnoughDiskSpace }
        #expect(held.lastError?.message.contains("not enough disk space") == true)
        let kept = PartFile.size(at: PartFile.path(for: destination)) ?? 0
        #expect(kept > 300_000, "the partial download is kept")
        #expect(!FileManager.default.fileExists(atPath: destination))

        // Free the space; a retry resumes from the part.
        try FileManager.default.removeItem(atPath: filler)
        server.setRoute("/big", Route(body: body, etag: "\"big\""))
        try await manager.retry(["big"])
        try await waitFor(manager, "big", .completed)
        #expect(sha256(ofFile: destination) == body.sha256Hex())
        let range = server.requests(for: "/big").last?.header("Range")
        #expect(range != nil && range != "bytes=0-")
        await manager.shutdown()
    }

    /// A small file's body, whole in memory, meets a disk filled meanwhile: its download waits for
    /// room (nothing of it is left on the disk, no unnamed file, no part), and a retry brings it.
    @Test func aSmallFileThatFindsTheDiskFullWaitsForRoomAndLeavesNothing() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let mounted = try MountedTmpfs(at: folder.file("disk"), megabytes: 4)
        let disk = mounted.path
        let gate = Gate()
        defer { gate.open(); mounted.unmount(); folder.remove(); server.stop() }
        let body = Body.pattern(size: 150_000, seed: 78)
        // Its answer waits until the disk is full.
        server.setRoute("/small.mp3", Route(body: body, contentType: "audio/mpeg", gate: gate))
        let filler = (disk as NSString).appendingPathComponent("filler")
        // A thread of its own fills the disk as soon as the request comes: this test's task may
        // wait seconds for a turn when every suite runs at once.
        let filled = Locked(false)
        let filling = Thread {
            while server.requests(for: "/small.mp3").isEmpty { usleep(1000) }
            let fd = open(filler, O_WRONLY | O_CREAT, 0o644)
            let chunk = [UInt8](repeating: 0, count: 16 * 1024)
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            close(fd)
            filled.withLock { $0 = true }
            gate.open()
        }
        filling.start()
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(DownloadRequest(id: "s", url: server.url("/small.mp3"), destination: .directory(disk)))
        try await eventually("the disk filled") { filled.withLock { $0 } }

        try await eventually("the download waits for room") {
            let download = try await manager.download(withID: "s")
            return download?.status == .queued && download?.lastError?.code == .notEnoughDiskSpace
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk) == ["filler"])

        try FileManager.default.removeItem(atPath: filler)
        server.setRoute("/small.mp3", Route(body: body, contentType: "audio/mpeg"))
        try await manager.retry(["s"])
        let done = try await waitFor(manager, "s", .completed)
        #expect(done.filePath == (disk as NSString).appendingPathComponent("small.mp3"))
        #expect(sha256(ofFile: (disk as NSString).appendingPathComponent("small.mp3")) == body.sha256Hex())
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk) == ["small.mp3"])
        await manager.shutdown()
    }

    @Test func aSymlinkAtThePartPathIsNotFollowed() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let victim = folder.file("victim.txt")
        try "precious".write(toFile: victim, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder.file("x.bin.part"), withDestinationPath: victim)
        server.setRoute("/x", Route(body: .bytes(Array("attack".utf8))))
        let manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request("x", server.url("/x"), to: folder.file("x.bin")))
        _ = try await waitFor(manager, "x", [.completed, .failed])
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        await manager.shutdown()
    }
}

extension DiskFullTests {
    /// After a reboot a part must be cut back to its checkpoint; on a read-only file system it
    /// cannot be, nor removed. The download fails saying so (never resuming onto bytes that
    /// may be garbage), the error is reported, and the stored boot id stays, so the next run
    /// tries the cut again.
    @Test func aPartThatCannotBeCutBackAfterARebootFailsTheDownloadAndKeepsTheOldBootID() async throws {
        let folder = TemporaryFolder()
        let disk = folder.file("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        func mount(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/mount")
            process.arguments = arguments
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "mount \(arguments) failed")
        }
        try mount(["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk])
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [disk]
            try? umount.run()   // the folder goes next; nothing to keep if this fails
            umount.waitUntilExit()
            folder.remove()
        }
        let database = folder.file("queue.sqlite")
        let destination = (disk as NSString).appendingPathComponent("r.bin")
        do {
            let store = try DownloadStore(path: database)
            var record = DownloadRecord(request: request("r", URL(string: "http://127.0.0.1:9/r")!, to: destination), sequence: 0, host: "")
            record.restoreStatus(.downloading)
            record.filePath = destination
            record.checkpoint = 10_000
            record.bytes = 50_000
            _ = try store.insert(record)
            try store.setMeta("boot_id", "a boot before the power cut")
        }
        #expect(FileManager.default.createFile(atPath: PartFile.path(for: destination), contents: Data(repeating: 7, count: 50_000)))
        try mount(["-o", "remount,ro", disk])

        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database)
        let failed = try await waitFor(manager, "r", .failed)
        #expect(failed.lastError?.message.contains("delete it, then retry") == true, "\(String(describing: failed.lastError))")
        #expect(await manager.persistenceError() != nil)
        await manager.shutdown()
        #expect(LocalFile.size(at: PartFile.path(for: destination)) == 50_000, "left as it was")
        #expect(try DownloadStore(path: database).meta("boot_id") == "a boot before the power cut")
    }
}

/// Whether this machine lets the tests mount a tmpfs.
enum Tmpfs {
    /// Tried once, on a scratch folder.
    static let canMount: Bool = {
        guard getuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-mount-probe-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: probe) }   // a scratch folder: nothing to keep
        guard (try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)) != nil,
              run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe]) == 0 else { return false }
        _ = run("/bin/umount", [probe])
        return true
    }()

    private static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
