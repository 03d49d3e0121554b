import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// The last save, made at shutdown, is reported like every other: `shutdown()` answers it, and
/// so does `persistenceError()` afterwards. Mounting needs root with CAP_SYS_ADMIN, as `make test`
/// has in CI; where the machine does not allow it, the suite is skipped and says why.
@Suite(.enabled(if: Tmpfs.canMount, "mounting a tmpfs is not permitted here (it needs root with CAP_SYS_ADMIN): full-disk tests skipped"))
struct ShutdownSaveTests {
    @Test func aSaveThatFailsAtShutdownIsWhatShutdownAnswers() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let mounted = try MountedTmpfs(at: folder.file("disk"), megabytes: 4)
        let gate = Gate()
        defer { gate.open(); mounted.unmount(); folder.remove(); server.stop() }
        let body = Body.pattern(size: 4 << 20, seed: 5)
        // Held mid-body: still running at the shutdown.
        server.setRoute("/slow", Route(body: body, etag: "\"slow\"", gate: gate, gateAfter: 300_000))
        let manager = try await DownloadManager.open(configuration: fastConfiguration(), databasePath: mounted.file("queue.sqlite"))
        // The file goes to another disk: only the database's is full.
        try await manager.enqueue(request("slow", server.url("/slow"), to: folder.file("slow.bin")))
        try await eventually("the download running") { (try await manager.download(withID: "slow")?.bytes ?? 0) > 0 }
        let filler = mounted.file("filler")
        let fd = open(filler, O_WRONLY | O_CREAT, 0o644)
        let chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)

        let failure = await manager.shutdown()
        let error = try #require(failure as? StoreError, "\(String(describing: failure))")
        #expect(error.isDiskFull, "\(error)")
        let later = await manager.persistenceError()
        #expect((later as? StoreError)?.isDiskFull == true, "still reported after the shutdown: \(String(describing: later))")
        #expect((PartFile.size(at: PartFile.path(for: folder.file("slow.bin"))) ?? 0) > 0, "the part is kept")
    }

    @Test func aManagerOpenedOffTheCallersThreadWorksAsOneOpenedInPlace() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let database = folder.file("queue.sqlite")
        var configuration = fastConfiguration()
        configuration.maxConcurrentDownloads = 0   // nothing starts: the queue only
        let manager = try await DownloadManager.open(configuration: configuration, databasePath: database)
        try await manager.enqueue(request("a", URL(string: "http://127.0.0.1:9/a")!, to: folder.file("a")))
        #expect(await manager.shutdown() == nil, "every save worked")
        let again = try DownloadManager(configuration: configuration, databasePath: database)
        #expect(try await again.download(withID: "a") != nil)
        await again.shutdown()
        await #expect(throws: StoreError.self) { try await DownloadManager.open(databasePath: folder.file("missing/queue.sqlite")) }
    }
}
