import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing

/// A database file that cannot be written (a read-only mount: root writes through chmod 0400) makes
/// every command that writes say so in one line, never the SQL that failed. Bind mounts need root
/// with CAP_SYS_ADMIN, as `make test` has in CI; where the machine does not allow it, the suite is skipped.
@Suite(.enabled(if: SmallDisk.canMount, "mounting is not permitted here (it needs root with CAP_SYS_ADMIN): read-only database tests skipped"))
struct ReadOnlyDatabaseTests {
    @Test func everyWriteToAReadOnlyDatabaseSaysSoInOneLine() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let home = folder.file("home")
        let database = (home as NSString).appendingPathComponent("monsoon.sqlite")
        server.setRoute("/a.xml", Route(body: .bytes(Array(PodcastCommandTests.feed(title: "A", count: 2).utf8)), contentType: "application/rss+xml"))
        server.setRoute("/b.xml", Route(body: .bytes(Array(PodcastCommandTests.feed(title: "B", count: 2).utf8)), contentType: "application/rss+xml"))
        server.setRoute("/one.mp3", Route(body: .bytes([1, 2, 3]), contentType: "audio/mpeg"))
        server.setRoute("/two.mp3", Route(body: .bytes([4, 5, 6]), contentType: "audio/mpeg"))
        for arguments in [["add", server.url("/a.xml").absoluteString], ["get", "-o", "out", server.url("/one.mp3").absoluteString],
                          ["config", "set", "concurrency", "3"]] {
            let result = await runMonsoon(["--home", home] + arguments, in: folder.path)
            #expect(result.status == 0, "\(arguments): \(result.errors)")
        }
        try "<opml><body><outline xmlUrl=\"\(server.url("/b.xml").absoluteString)\"/></body></opml>".write(toFile: folder.file("list.opml"), atomically: true, encoding: .utf8)

        let mount = try ReadOnlyBindMount(database)
        defer { mount.unmount() }
        let readOnly = "the database \(database) is read-only (its file system is mounted read-only), so nothing was saved; "
            + "remount it read-write, or move the database where it can be written"
        let writers: [[String]] = [
            ["add", server.url("/b.xml").absoluteString], ["import", "list.opml"], ["get", "-o", "out", server.url("/two.mp3").absoluteString],
            ["queue", "add", "1"], ["config", "set", "concurrency", "2"], ["refresh"], ["unsubscribe", "1"], ["played", "1"],
            ["position", "1", "30"], ["downloads", "clear"],
        ]
        for arguments in writers {
            let result = try await MonsoonProcess(arguments, in: folder.path, home: home).finish()
            #expect(result.status == 1, "\(arguments): \(result.errors)")
            #expect(result.errors.hasPrefix("monsoon: ") && result.errors.hasSuffix(readOnly + "\n"), "\(arguments): \(result.errors)")
            #expect(result.errors.split(separator: "\n").count == 1, "\(arguments): one line: \(result.errors)")
            for sql in ["INSERT", "UPDATE", "DELETE", "CREATE", "SELECT", "failed:"] {
                #expect(!result.errors.contains(sql), "\(arguments): \(result.errors)")
            }
        }
        // Reading still works.
        let listed = try await MonsoonProcess(["podcasts"], in: folder.path, home: home).finish()
        #expect(listed.status == 0 && listed.output.contains("A"), "\(listed.errors)")

        mount.unmount()
        let setting = await runMonsoon(["--home", home, "config", "get", "concurrency"], in: folder.path)
        #expect(setting.output == "3\n", "nothing changed")
        let podcasts = await runMonsoon(["--home", home, "podcasts", "--json"], in: folder.path)
        #expect(podcasts.output.components(separatedBy: "\"feedURL\"").count == 2, "\(podcasts.output)")
    }

    /// A whole home on a read-only file system is said as such before the database is opened.
    @Test func aHomeOnAReadOnlyFileSystemSaysSo() async throws {
        let folder = Folder()
        let disk = try SmallDisk(at: folder.file("disk"), megabytes: 4)
        defer { disk.unmount(); folder.remove() }
        let home = folder.file("disk/home")
        #expect(await runMonsoon(["--home", home, "config", "set", "concurrency", "3"], in: folder.path).status == 0)
        try disk.remountReadOnly()
        let result = try await MonsoonProcess(["config", "set", "concurrency", "2"], in: folder.path, home: home).finish()
        #expect(result.status == 1)
        #expect(result.errors == "monsoon: the Monsoon home \(home) is on a read-only file system; remount it read-write, or choose another home with --home or MONSOON_HOME\n")
    }
}

/// An empty database file is damage, not a new library; and no run of Monsoon leaves one behind.
@Suite struct EmptyDatabaseTests {
    @Test func anEmptyDatabaseIsReportedAndLeftAlone() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let home = folder.file("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let database = (home as NSString).appendingPathComponent("monsoon.sqlite")
        #expect(FileManager.default.createFile(atPath: database, contents: Data(), attributes: [.posixPermissions: 0o600]))
        let message = "monsoon: the database \(database) is damaged (0 bytes: its contents are gone); it was left untouched; "
            + "restore it from a backup, or move it away to start afresh with an empty one\n"
        for arguments in [["podcasts"], ["downloads"], ["config", "set", "concurrency", "2"], ["add", "http://127.0.0.1:9/feed.xml"]] {
            let result = await runMonsoon(["--home", home] + arguments, in: folder.path)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.errors == message, "\(arguments)")
        }
        #expect(fileSize(database) == 0, "left untouched")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home).filter { $0.hasPrefix("monsoon.sqlite") } == ["monsoon.sqlite"])
    }

    @Test func processesOpeningAFreshHomeAtOnceAllWork() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let home = folder.file("home")
        let processes = try (1...6).map { try MonsoonProcess(["config", "set", "concurrency", "\($0)"], in: folder.path, home: home) }
        for process in processes {
            let result = try await process.finish()
            #expect(result.status == 0, "\(result.errors)")
        }
        let database = try Database(path: (home as NSString).appendingPathComponent("monsoon.sqlite"))
        #expect(try database.integrityCheck() == "ok")
        let setting = await runMonsoon(["--home", home, "config", "get", "concurrency"], in: folder.path)
        #expect((1...6).map { "\($0)\n" }.contains(setting.output), "\(setting.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home).filter { $0.contains("creating") }.isEmpty, "no temporary left")
    }

    /// Killed at any moment while it creates the home, Monsoon leaves no database, or a whole one.
    @Test func aKillWhileCreatingNeverLeavesAnEmptyDatabase() async throws {
        let folder = Folder()
        defer { folder.remove() }
        var generator = SystemRandomNumberGenerator()
        for round in 0..<20 {
            let home = folder.file("home-\(round)")
            let process = try MonsoonProcess(["config", "set", "concurrency", "2"], in: folder.path, home: home)
            // A jitter of a few milliseconds: each round is killed at another point of its start.
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...30_000_000, using: &generator))
            kill(process.process.processIdentifier, SIGKILL)
            _ = try await process.finish()
            let database = (home as NSString).appendingPathComponent("monsoon.sqlite")
            guard FileManager.default.fileExists(atPath: database) else { continue }
            #expect(fileSize(database) > 0, "round \(round): an empty database was left")
            let opened = await runMonsoon(["--home", home, "config", "get", "concurrency"], in: folder.path)
            #expect(opened.status == 0, "round \(round): \(opened.errors)")
        }
    }
}

/// A file or folder bind-mounted on itself read-only: writes to it fail with EROFS, even for root.
final class ReadOnlyBindMount: @unchecked Sendable {
    // Unchecked: used from one test's task only.
    let path: String
    private var mounted = false

    init(_ path: String) throws {
        self.path = path
        guard Self.run(["--bind", path, path]) == 0 else { throw CLITestError("could not bind-mount \(path)") }
        mounted = true
        guard Self.run(["-o", "remount,ro,bind", path, path]) == 0 else {
            unmount()
            throw CLITestError("could not remount \(path) read-only")
        }
    }

    func unmount() {
        guard mounted else { return }
        mounted = false
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        process.arguments = [path]
        try? process.run()   // a mount that cannot be undone fails the test's later checks, which say so
        process.waitUntilExit()
    }

    private static func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/mount")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// A row of the queue that cannot be read is skipped, and the run that met it says so at the end.
@Suite struct UnreadableQueueRowTests {
    @Test func aRowTheRestoreCannotReadIsSaidAndFailsTheRun() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let home = folder.file("home")
        server.setRoute("/gone.mp3", Route.html(status: 404, "<html>gone</html>"))
        #expect(await runMonsoon(["--home", home, "get", "-o", "out", server.url("/gone.mp3").absoluteString], in: folder.path).status == 1)
        let database = try Database(path: (home as NSString).appendingPathComponent("monsoon.sqlite"))
        try database.execute("UPDATE downloads SET headers = '{not json', status = 'queued'")   // queued: the run starts the engine, which restores it

        let run = await runMonsoon(["--home", home, "download"], in: folder.path)
        #expect(run.status == 1, "\(run.errors)")
        let said = run.errors.split(separator: "\n").filter { $0.hasPrefix("monsoon: the download queue had a problem during the run: ") }
        #expect(said.count == 1, "\(run.errors)")
    }
}
