import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// A real ENOSPC: a 4 MiB tmpfs that the test fills up during a download.
/// Mounting needs root with CAP_SYS_ADMIN, as `make test` has in CI; where the machine does
/// not allow it, the suite is skipped and says why.
@Suite(.enabled(if: Tmpfs.canMount, "mounting a tmpfs is not permitted here (it needs root with CAP_SYS_ADMIN): full-disk tests skipped"))
struct DiskFullTests {

    @Test func aFullDiskFailsWithTheReasonKeepsThePartAndRetryResumes() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let disk = folder.file("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=4m", "tmpfs", disk]
        try mount.run()
        mount.waitUntilExit()
        try #require(mount.terminationStatus == 0, "could not mount a tmpfs at \(disk)")
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [disk]
            try? umount.run()
            umount.waitUntilExit()
            folder.remove()
            server.stop()
        }
        let body = Body.pattern(size: 3 << 20, seed: 77)
        server.setRoute("/big", Route(body: body, etag: "\"big\"", throttle: 500_000))
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

        let failed = try await waitFor(manager, "big", .failed)
        #expect(failed.lastError?.code == .notEnoughDiskSpace)
        #expect(failed.lastError?.message.contains("not enough disk space") == true)
        let kept = PartFile.size(at: PartFile.path(for: destination)) ?? 0
        #expect(kept > 300_000, "the partial download is kept")
        #expect(!FileManager.default.fileExists(atPath: destination))

        // Free the space; a retry resumes from the part.
        try FileManager.default.removeItem(atPath: filler)
        server.setRoute("/big", Route(body: body, etag: "\"big\""))
        try await manager.retry("big")
        try await waitFor(manager, "big", .completed)
        #expect(sha256(ofFile: destination) == body.sha256Hex())
        let range = server.requests(for: "/big").last?.header("Range")
        #expect(range != nil && range != "bytes=0-")
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
