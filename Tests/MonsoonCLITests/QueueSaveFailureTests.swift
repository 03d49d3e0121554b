import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing

/// A home on a small tmpfs that fills while the engine runs: the saves of the download queue fail,
/// and the command says why and exits 3 (the disk holding the database is full), even when the
/// failing save is the last one, made at shutdown; the downloads' bytes stay. Mounting needs root
/// with CAP_SYS_ADMIN, as `make test` has in CI; where the machine does not allow it, the suite is
/// skipped and says why.
@Suite(.enabled(if: SmallDisk.canMount, "mounting a tmpfs is not permitted here (it needs root with CAP_SYS_ADMIN): full-disk tests skipped"))
struct QueueSaveFailureTests {
    static let size = 1_200_000

    /// The line a run ends with when the database's disk filled under it.
    static func saveFailure(_ home: String) -> String {
        "monsoon: could not save the download queue: the disk holding the database \(home)/monsoon.sqlite is full ("
    }

    @Test func aDatabaseDiskThatFillsDuringAGetFailsItWithExitStatus3() async throws {
        let server = try TestServer()
        let folder = Folder()
        let disk = try SmallDisk(at: folder.file("disk"), megabytes: 4)
        defer { disk.unmount(); folder.remove(); server.stop() }
        let home = folder.file("disk/home")
        let body = Body.pattern(size: 3_000_000, seed: 7)
        // Held part-way until the disk is full: it is running when the disk fills; the file itself
        // goes to another disk.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/a.mp3", Route(body: body, contentType: "audio/mpeg", gate: gate, gateAfter: 300_000))
        let process = try MonsoonProcess(["get", "-o", "out", server.url("/a.mp3").absoluteString], in: folder.path, home: home)
        try await waitUntil("the download running") { fileSize(folder.file("out/a.mp3.part")) == 300_000 }
        disk.fill()
        gate.open()
        let result = try await process.finish()
        #expect(result.status == 3, "\(result.errors)")
        #expect(result.errors.contains(Self.saveFailure(home)), "\(result.errors)")
        #expect(result.errors.contains("); free some space and try again\n"), "\(result.errors)")
        #expect(!result.errors.contains("INSERT") && !result.errors.contains("UPDATE"), "\(result.errors)")
        #expect(FileManager.default.contents(atPath: folder.file("out/a.mp3")) == body.data(), "the download itself is whole")

        disk.free()
        let database = try Database(path: (home as NSString).appendingPathComponent("monsoon.sqlite"))
        #expect(try database.integrityCheck() == "ok")
    }

    /// Ctrl-C stops the downloads and saves their state one last time: that save failing is the
    /// command's failure too, said and exit 3, not the quiet 130 of an interruption. The part and
    /// its bytes stay, and the next run resumes it.
    @Test func aDatabaseDiskThatFillsJustBeforeShutdownFailsTheCommandWithExitStatus3() async throws {
        let server = try TestServer()
        let folder = Folder()
        let disk = try SmallDisk(at: folder.file("disk"), megabytes: 4)
        defer { disk.unmount(); folder.remove(); server.stop() }
        let home = folder.file("disk/home")
        let body = Body.pattern(size: Self.size, seed: 8)
        // Held part-way: it is running when Ctrl-C comes.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/b.mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"b\"", gate: gate, gateAfter: 300_000))
        let process = try MonsoonProcess(["get", "-o", "out", server.url("/b.mp3").absoluteString], in: folder.path, home: home)
        try await waitUntil("the download running") { fileSize(folder.file("out/b.mp3.part")) == 300_000 }
        disk.fill()
        process.interrupt()
        let result = try await process.finish()
        #expect(result.status == 3, "\(result.errors)")
        #expect(result.errors.contains(Self.saveFailure(home)), "\(result.errors)")
        #expect(result.errors.contains("); free some space and try again\n"), "\(result.errors)")
        let kept = fileSize(folder.file("out/b.mp3.part"))
        #expect(kept > 0, "the part is kept")
        #expect(FileManager.default.contents(atPath: folder.file("out/b.mp3.part")) == body.data().prefix(kept), "with its bytes")

        disk.free()
        server.setRoute("/b.mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"b\""))
        let again = try await MonsoonProcess(["get", "-o", "out", server.url("/b.mp3").absoluteString], in: folder.path, home: home).finish()
        #expect(again.status == 0, "\(again.errors)")
        #expect(FileManager.default.contents(atPath: folder.file("out/b.mp3")) == body.data(), "resumed whole")
        #expect(server.requests(for: "/b.mp3").last?.header("Range") != nil, "from the part, not from the start")
    }
}
