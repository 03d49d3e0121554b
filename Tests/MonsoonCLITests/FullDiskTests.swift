import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing

/// A home on a small tmpfs that fills up: the database's own writes fail with a clear error,
/// and what it held stays intact. Mounting needs root with CAP_SYS_ADMIN, as `make test` has
/// in CI; where the machine does not allow it, the suite is skipped and says why.
@Suite(.enabled(if: SmallDisk.canMount, "mounting a tmpfs is not permitted here (it needs root with CAP_SYS_ADMIN): full-disk tests skipped"))
struct FullDiskTests {
    @Test func aFullDiskFailsTheDatabaseWriteClearlyAndKeepsItIntact() async throws {
        let server = try TestServer()
        let folder = Folder()
        let disk = try SmallDisk(at: folder.file("disk"), megabytes: 2)
        defer { disk.unmount(); folder.remove(); server.stop() }
        let home = folder.file("disk/home")
        server.setRoute("/a.mp3", Route(body: .bytes([1, 2, 3]), contentType: "audio/mpeg"))
        let first = await runMonsoon(["--home", home, "get", "-o", "out", server.url("/a.mp3").absoluteString], in: folder.path)
        #expect(first.status == 0, "\(first.errors)")

        disk.fill()
        let urls = (0..<3_000).map { server.url("/episode-with-a-long-name-\($0).mp3").absoluteString }
        let full = await runMonsoon(["--home", home, "get", "-o", "out"] + urls, in: folder.path)
        #expect(full.status == 3, "a full database disk is a full disk: \(full.errors)")
        #expect(full.errors.hasPrefix("monsoon: ") && full.errors.contains("the disk holding the database \(home)/monsoon.sqlite is full ("),
                "\(full.errors)")
        #expect(full.errors.split(separator: "\n").count == 1, "one line: \(full.errors)")
        // Downloads are queued in batches: usually the first finds no room, but now and then, under
        // load, a batch or two fit. The message then says how many, and exactly those are queued.
        let queued = full.errors.firstMatch(of: /; the first (\d+) were queued: run the same command again to go on\n$/).map { Int($0.1)! } ?? 0
        if queued == 0 {
            #expect(full.errors.hasSuffix("); free some space and try again\n"), "\(full.errors)")
            #expect(server.requests(for: "/episode-with-a-long-name-0.mp3").isEmpty, "nothing started")
        }

        disk.free()
        let database = try Database(path: (home as NSString).appendingPathComponent("monsoon.sqlite"))
        #expect(try database.integrityCheck() == "ok")
        #expect(try database.scalarInt("SELECT count(*) FROM downloads") == 1 + queued, "the failed batch left nothing behind")
        #expect(try database.scalarText("SELECT status FROM downloads WHERE url LIKE '%/a.mp3'") == "completed")
        let again = await runMonsoon(["--home", home, "get", "-o", "out", server.url("/a.mp3").absoluteString], in: folder.path)
        #expect(again.status == 0, "\(again.errors)")
    }
}

/// A tmpfs of a few megabytes, mounted for a test, and a file that fills it.
final class SmallDisk: @unchecked Sendable {
    // Unchecked: used from one test's task only.
    let path: String
    private var filler: String { (path as NSString).appendingPathComponent("filler") }

    /// Whether this machine lets the tests mount a tmpfs (tried once, on a scratch folder).
    static let canMount: Bool = {
        guard getuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-mount-probe-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: probe) }   // a scratch folder: nothing to keep
        guard let disk = try? SmallDisk(at: probe, megabytes: 1) else { return false }
        disk.unmount()
        return true
    }()

    init(at path: String, megabytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) == 0 else {
            throw CLITestError("could not mount a tmpfs at \(path)")
        }
    }

    /// Writes zeros until the disk is full.
    func fill() {
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 16 << 10)
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    func free() { try? FileManager.default.removeItem(atPath: filler) }   // absent when never filled: nothing to free

    /// Grows (or shrinks) the disk in place: what it holds stays.
    func resize(megabytes: Int) throws {
        guard Self.run("/bin/mount", ["-o", "remount,size=\(megabytes)m", path]) == 0 else { throw CLITestError("could not resize the tmpfs at \(path)") }
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Bytes free on it.
    var freeBytes: Int {
        var info = statvfs()
        return statvfs(path, &info) == 0 ? Int(info.f_bavail) * Int(info.f_frsize) : 0
    }

    func unmount() { _ = Self.run("/bin/umount", [path]) }

    /// Makes the disk read-only: every write to it fails with EROFS, even root's.
    func remountReadOnly() throws {
        guard Self.run("/bin/mount", ["-o", "remount,ro", path]) == 0 else { throw CLITestError("could not remount \(path) read-only") }
    }

    /// Runs `executable` with `arguments`, its errors unseen; returns its exit status (-1 when it cannot start).
    static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
