import CSQLite
import Foundation
import Testing
@testable import MonsoonStore

/// How the database file comes to be, what an empty one means, and what users read when the store fails.
@Suite struct DatabaseFileTests {
    static func folder() -> String {
        let folder = (FileManager.default.temporaryDirectory.path(percentEncoded: false) as NSString)
            .appendingPathComponent("monsoon-store-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static let schema = Migrator(component: "items", [.init(version: 1, sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")])

    /// Before, SQLite took the empty file for a new database: every subscription and the queue silently gone.
    @Test func anEmptyFileIsDamagedNotANewDatabase() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }   // scratch
        let path = (folder as NSString).appendingPathComponent("monsoon.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        for _ in 0..<2 {
            do {
                let database = try Database(path: path)
                try Self.schema.migrate(database)
                Issue.record("an empty file must not open as a new database")
            } catch let error as StoreError {
                #expect(error.isCorrupt)
                #expect(error.message == "the database \(path) is damaged (0 bytes: its contents are gone); it was left untouched; "
                        + "restore it from a backup, or move it away to start afresh with an empty one")
            }
        }
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 0, "left untouched")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["monsoon.sqlite"])
    }

    @Test func aNewDatabaseIsWholeAndPrivateFromTheStart() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }   // scratch
        let path = (folder as NSString).appendingPathComponent("monsoon.sqlite")
        let database = try Database(path: path)
        // Before any table: the header is on disk, so no moment leaves an empty file at the name.
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.size] as? Int ?? 0) >= 4096)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let header = try #require(FileManager.default.contents(atPath: path)).prefix(16)
        #expect(header == Data("SQLite format 3\0".utf8))
        #expect(try database.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("creating") }.isEmpty, "no temporary left")
    }

    @Test func manyOpeningAFreshPathAtOnceAllWork() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }   // scratch
        let path = (folder as NSString).appendingPathComponent("monsoon.sqlite")
        let openers = 8
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<openers {
                group.addTask {
                    let database = try Database(path: path)
                    try Self.schema.migrate(database)
                    try database.write { try database.run("INSERT INTO items (name) VALUES (?)", "opener \(index)") }
                }
            }
            try await group.waitForAll()
        }
        let database = try Database(path: path)
        #expect(try database.scalarInt("SELECT count(*) FROM items") == openers)
        #expect(try database.integrityCheck() == "ok")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("creating") }.isEmpty)
    }

    /// A process killed between creating its temporary and linking it leaves the temporary: the next creation removes it.
    @Test func temporariesOfProcessesThatAreGoneAreRemoved() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }   // scratch
        let pidMax = (try? String(contentsOfFile: "/proc/sys/kernel/pid_max", encoding: .utf8))   // no /proc: the usual maximum
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 4_194_304
        let gone = ".monsoon.sqlite.creating-\(pidMax)-12345"   // pids stay below pid_max: no process has it
        let alive = ".monsoon.sqlite.creating-\(getpid())-67890"
        for name in [gone, gone + "-wal", alive] {
            #expect(FileManager.default.createFile(atPath: (folder as NSString).appendingPathComponent(name), contents: Data([1])))
        }
        _ = try Database(path: (folder as NSString).appendingPathComponent("monsoon.sqlite"))
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("creating") }
        #expect(left == [alive], "another running process's temporary is its own")
    }

    @Test func messagesSayWhatHappenedNeverTheSQL() throws {
        let database = try Database(path: ":memory:")
        try Self.schema.migrate(database)
        let insert = "INSERT INTO items (name) VALUES (?)"
        try database.run(insert, "a")
        do {
            try database.run(insert, "a")
            Issue.record("a UNIQUE violation must fail")
        } catch {
            #expect(error.isConstraintViolation)
            #expect(error.message == "the in-memory database refused a change that conflicts with what it holds (UNIQUE constraint failed: items.name)")
            #expect(error.statement == insert)
            #expect(error.reason == "UNIQUE constraint failed: items.name")
        }
        let cases: [(Int32, String, String)] = [
            (SQLITE_CORRUPT, "database disk image is malformed",
             "the database /x/monsoon.sqlite is damaged (database disk image is malformed); it was left as it is: restore it from a backup, or move it away to start afresh"),
            (SQLITE_BUSY, "database is locked",
             "the database /x/monsoon.sqlite is busy: another process kept it locked too long (database is locked); try again"),
            (SQLITE_FULL, "database or disk is full", "the disk holding the database /x/monsoon.sqlite is full (database or disk is full); free some space and try again"),
            (SQLITE_READONLY, "attempt to write a readonly database",
             "the database /x/monsoon.sqlite is read-only (its file was moved or deleted while in use), so nothing was saved; try again"),
            (SQLITE_ERROR, "no such table: items",
             "the database /x/monsoon.sqlite failed unexpectedly (no such table: items, SQLite error 1); please report this"),
        ]
        for (code, reason, message) in cases {
            let error = StoreError.failure(code: code, reason: reason, systemErrno: 0, path: "/x/monsoon.sqlite", statement: "SELECT\n *")
            #expect(error.message == message)
            #expect(!error.message.contains("SELECT"))
        }
    }
}
