import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing

/// A home that cannot be written (a backup snapshot, a read-only file system, a folder without write
/// permission) is read as it is by every reading command, which prints what it prints on the home
/// when writable and changes nothing there; a writing command says the home cannot be written.
@Suite(.enabled(if: !UnwritableFolder.Kind.available.isEmpty,
                "no way to make a folder unwritable here (a read-only mount needs CAP_SYS_ADMIN, chattr +i CAP_LINUX_IMMUTABLE, chmod a user other than root): read-only home tests skipped"))
struct ReadOnlyHomeTests {
    /// The reading commands, in their text and JSON forms.
    static let readers: [[String]] = [
        ["podcasts"], ["podcasts", "--json"], ["episodes", "1"], ["episodes", "morning", "--json"],
        ["downloads"], ["downloads", "--json"], ["downloads", "--status", "completed"],
        ["export"], ["export", "--include-credentials"], ["storage"], ["storage", "--json"],
        ["config"], ["config", "list"], ["config", "get", "concurrency"], ["config", "get", "keep-latest", "--podcast", "morning"],
        ["queue"], ["queue", "--json"], ["verify"],
    ]

    @Test(arguments: UnwritableFolder.Kind.available)
    func readingCommandsReadAnUnwritableHomeAsItIs(_ kind: UnwritableFolder.Kind) async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let home = folder.file("home")
        try await Self.fill(home, in: folder, server: server)
        var written: [[String]: RunResult] = [:]
        for arguments in Self.readers {
            let result = await runMonsoon(["--home", home] + arguments, in: folder.path)
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            written[arguments] = result
        }

        let unwritable = try UnwritableFolder(home, kind)
        defer { unwritable.restore() }
        let before = try Self.state(of: home)
        for arguments in Self.readers {
            let result = await runMonsoon(["--home", home] + arguments, in: folder.path)
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            #expect(Self.timeless(result.output) == written[arguments].map { Self.timeless($0.output) }, "\(arguments)")
            #expect(result.errors == written[arguments]?.errors, "\(arguments)")
        }
        #expect(try Self.state(of: home) == before, "nothing in the home changed")

        let message = kind == .readOnlyMount
            ? "monsoon: the Monsoon home \(home) is on a read-only file system; remount it read-write, or choose another home with --home or MONSOON_HOME\n"
            : "monsoon: the Monsoon home \(home) is not writable; choose another with --home or MONSOON_HOME\n"
        for arguments in [["add", server.url("/other.xml").absoluteString], ["config", "set", "concurrency", "4"], ["queue", "add", "1"]] {
            let result = await runMonsoon(["--home", home] + arguments, in: folder.path)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.errors == message, "\(arguments)")
        }
        #expect(try Self.state(of: home) == before, "nothing in the home changed")
    }

    /// A snapshot of a home taken while a monsoon had it open holds transactions in the database's
    /// log (`-wal`) only: they are read too.
    @Test(arguments: UnwritableFolder.Kind.available)
    func aSnapshotWithALogIsReadWhole(_ kind: UnwritableFolder.Kind) async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let home = folder.file("home")
        try await Self.fill(home, in: folder, server: server)
        let snapshot = folder.file("snapshot")
        do {
            // An open connection keeps the log: the last one to close would write it into the database.
            let open = try Database(path: home + "/monsoon.sqlite")
            ArchiveFolderTests.serve(server, "/night.xml", title: "Night Show", episodes: [("Late", "/late.mp3", "audio/mpeg")])
            for arguments in [["add", server.url("/night.xml").absoluteString], ["config", "set", "concurrency", "7"]] {
                let result = await runMonsoon(["--home", home] + arguments, in: folder.path)
                #expect(result.status == 0, "\(arguments): \(result.errors)")
            }
            try FileManager.default.copyItem(atPath: home, toPath: snapshot)
            withExtendedLifetime(open) {}
        }
        #expect(fileSize(snapshot + "/monsoon.sqlite-wal") > 0, "the snapshot has a log")

        let unwritable = try UnwritableFolder(snapshot, kind)
        defer { unwritable.restore() }
        let before = try Self.state(of: snapshot)
        let setting = await runMonsoon(["--home", snapshot, "config", "get", "concurrency"], in: folder.path)
        #expect(setting.status == 0 && setting.output == "7\n", "\(setting.errors)")
        let podcasts = await runMonsoon(["--home", snapshot, "podcasts"], in: folder.path)
        #expect(podcasts.status == 0 && podcasts.output.contains("Morning Show") && podcasts.output.contains("Night Show"), "\(podcasts.errors)")
        let exported = await runMonsoon(["--home", snapshot, "export"], in: folder.path)
        #expect(exported.status == 0 && exported.output.contains(server.url("/night.xml").absoluteString), "\(exported.errors)")
        #expect(try Self.state(of: snapshot) == before, "nothing in the snapshot changed")
    }

    /// An unwritable folder with no database, or no home at all under an unwritable folder: what a new home prints, and nothing created.
    @Test(arguments: UnwritableFolder.Kind.available)
    func anUnwritableHomeWithoutADatabaseReadsAsAnEmptyOne(_ kind: UnwritableFolder.Kind) async throws {
        let folder = Folder()
        defer { folder.remove() }
        let empty = folder.file("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var fresh: [[String]: RunResult] = [:]
        for arguments in Self.readers {
            fresh[arguments] = await runMonsoon(["--home", folder.file("fresh")] + arguments, in: folder.path)
        }

        let unwritable = try UnwritableFolder(empty, kind)
        defer { unwritable.restore() }
        for home in [empty, empty + "/missing/home"] {
            for arguments in Self.readers {
                let result = await runMonsoon(["--home", home] + arguments, in: folder.path)
                #expect(result.status == fresh[arguments]?.status, "\(arguments): \(result.errors)")
                #expect(Self.timeless(result.output) == fresh[arguments].map { Self.timeless($0.output) }, "\(arguments)")
                #expect(result.errors == fresh[arguments]?.errors, "\(arguments)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty, "nothing created")
    }

    /// A database from an older Monsoon (here, its library one version behind) is read as this one
    /// reads it after updating it, and stays as it was.
    @Test(arguments: UnwritableFolder.Kind.available)
    func aDatabaseFromAnOlderMonsoonIsReadAsItWouldBeUpdated(_ kind: UnwritableFolder.Kind) async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let home = folder.file("home")
        try await Self.fill(home, in: folder, server: server)
        let readers = [["podcasts", "--json"], ["episodes", "1", "--json"], ["downloads"], ["storage"], ["config"]]
        var current: [[String]: RunResult] = [:]
        for arguments in readers { current[arguments] = await runMonsoon(["--home", home] + arguments, in: folder.path) }
        do {
            let database = try Database(path: home + "/monsoon.sqlite")
            try database.execute("ALTER TABLE podcasts DROP COLUMN catalogue_end; UPDATE schema_versions SET version = 5 WHERE component = 'library'")
        }

        let unwritable = try UnwritableFolder(home, kind)
        defer { unwritable.restore() }
        let before = try Self.state(of: home)
        for arguments in readers {
            let result = await runMonsoon(["--home", home] + arguments, in: folder.path)
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            #expect(Self.timeless(result.output) == current[arguments].map { Self.timeless($0.output) }, "\(arguments)")
        }
        #expect(try Self.state(of: home) == before, "nothing in the home changed")
    }

    /// A home with an archived podcast, another with an episode queued, a plain download and settings.
    static func fill(_ home: String, in folder: Folder, server: TestServer) async throws {
        ArchiveFolderTests.serve(server, "/morning.xml", title: "Morning Show", episodes: [("First", "/1.mp3", "audio/mpeg"), ("Second", "/2.mp3", "audio/mpeg")])
        ArchiveFolderTests.serve(server, "/noon.xml", title: "Noon Show", episodes: [("Lunch", "/lunch.mp3", "audio/mpeg"), ("Tea", "/tea.mp3", "audio/mpeg")])
        let setup: [[String]] = [
            ["config", "set", "download-root", folder.file("Podcasts")], ["archive", server.url("/morning.xml").absoluteString],
            ["add", server.url("/noon.xml").absoluteString], ["queue", "add", "--podcast", "noon", "--latest", "1"],
            ["config", "set", "concurrency", "3"], ["config", "set", "keep-latest", "2", "--podcast", "1"],
            ["get", "-o", folder.file("out"), server.url("/2.mp3").absoluteString],
        ]
        for arguments in setup {
            let result = await runMonsoon(["--home", home] + arguments, in: folder.path)
            guard result.status == 0 else { throw CLITestError("\(arguments): \(result.errors)") }
        }
    }

    /// `output` without the moment an export was made.
    static func timeless(_ output: String) -> String {
        output.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("<dateCreated>") }.joined(separator: "\n")
    }

    /// Each entry of `folder`, and the folder itself ("."), with its size and modification time.
    static func state(of folder: String) throws -> [String: String] {
        var state: [String: String] = [:]
        for name in ["."] + (try FileManager.default.contentsOfDirectory(atPath: folder)) {
            var status = stat()
            guard stat(folder + "/" + name, &status) == 0 else { throw CLITestError("cannot stat \(name) in \(folder)") }
            state[name] = "\(status.st_size) bytes, modified \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
        }
        return state
    }
}

/// A folder made unwritable for a test, for root too, and writable again (`restore`) at its end.
final class UnwritableFolder: @unchecked Sendable {
    // Unchecked: used from one test's task only.

    /// How the folder is made unwritable.
    enum Kind: String, CaseIterable, Sendable {
        /// Bind-mounted on itself read-only: every write fails with EROFS, as on a read-only file system.
        case readOnlyMount
        /// `chattr +i`: nothing can be created or removed in it, even by root (EPERM).
        case immutable
        /// `chmod 500`, which root ignores (EACCES).
        case withoutWritePermission

        /// The kinds this machine allows, each tried once on a scratch folder.
        static let available: [Kind] = allCases.filter { kind in
            let probe = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-unwritable-probe-\(UUID().uuidString)"
            guard (try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)) != nil else { return false }
            defer { try? FileManager.default.removeItem(atPath: probe) }   // a scratch folder: nothing to keep
            guard let folder = try? UnwritableFolder(probe, kind) else { return false }
            defer { folder.restore() }
            return mkdir(probe + "/x", 0o700) != 0
        }
    }

    let path: String
    let kind: Kind
    private var mount: ReadOnlyBindMount?
    private var restored = false

    init(_ path: String, _ kind: Kind) throws {
        self.path = path
        self.kind = kind
        switch kind {
        case .readOnlyMount:
            mount = try ReadOnlyBindMount(path)
        case .immutable:
            guard SmallDisk.run("/usr/bin/chattr", ["+i", path]) == 0 else { throw CLITestError("could not make \(path) immutable") }
        case .withoutWritePermission:
            guard getuid() != 0, chmod(path, 0o500) == 0 else { throw CLITestError("could not take the write permission of \(path) away") }
        }
    }

    func restore() {
        guard !restored else { return }
        restored = true
        switch kind {
        case .readOnlyMount: mount?.unmount()
        case .immutable: _ = SmallDisk.run("/usr/bin/chattr", ["-i", path])   // one that cannot be undone fails the folder's removal, which says so
        case .withoutWritePermission: chmod(path, 0o700)
        }
    }
}
