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
        defer { disk.unmount(); folder.remove(); server.stop() }
        let body = Body.pattern(size: 1_536 << 10, seed: 9)
        for index in 1...5 { server.setRoute("/e\(index).mp3", Route(body: body, throttle: 2_000_000)) }
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 5))
        try await manager.enqueue(contentsOf: (1...5).map { index in
            DownloadRequest(id: DownloadID("e\(index)"), url: server.url("/e\(index).mp3"), destination: .file(disk.file("e\(index).mp3")),
                            expectedSize: body.count)
        })
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
        for id in waiting { #expect(server.requests(for: "/\(id.rawValue).mp3").isEmpty, "\(id) was never asked for") }
        for id in completed { #expect(sha256(ofFile: disk.file("\(id.rawValue).mp3")) == body.sha256Hex()) }

        // Room again (two files moved away): the waiting ones go on by themselves.
        for id in completed.prefix(2) { try FileManager.default.removeItem(atPath: disk.file("\(id.rawValue).mp3")) }
        for id in waiting { try await waitFor(manager, id, .completed, seconds: 30) }
        for id in waiting { #expect(sha256(ofFile: disk.file("\(id.rawValue).mp3")) == body.sha256Hex()) }
        await manager.shutdown()
    }

    /// Sizes known only from the responses: all five start, but once a length is known, a
    /// download that does not fit beside the others stops before writing, and waits.
    @Test func aLengthThatDoesNotFitBesideTheRunningDownloadsWaits() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let disk = try MountedTmpfs(at: folder.file("disk"), megabytes: 5)
        defer { disk.unmount(); folder.remove(); server.stop() }
        let body = Body.pattern(size: 1_536 << 10, seed: 11)
        for index in 1...5 { server.setRoute("/e\(index).mp3", Route(body: body, throttle: 1_000_000)) }
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 5))
        try await manager.enqueue(contentsOf: (1...5).map { index in
            request(DownloadID("e\(index)"), server.url("/e\(index).mp3"), to: disk.file("e\(index).mp3"))
        })
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
