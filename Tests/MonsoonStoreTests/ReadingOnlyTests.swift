import CSQLite
import Foundation
import Testing
@testable import MonsoonStore

private enum NameColumn: Int, TableColumn { case name }

/// A database opened only to read (a home that cannot be written): read as it is, log included,
/// and nothing beside it created or changed.
@Suite struct ReadingOnlyTests {
    static let schema = DatabaseFileTests.schema
    static let newer = Migrator(component: "items", DatabaseFileTests.schema.migrations + [.init(version: 2, sql: "ALTER TABLE items ADD COLUMN size INTEGER")])

    /// A database of `names` in a folder whose name needs encoding in a URI, in a new scratch folder.
    static func database(_ names: [String]) throws -> (scratch: String, folder: String, path: String) {
        let scratch = DatabaseFileTests.folder()
        let folder = scratch + "/a ?#%é&mode=rw"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/monsoon.sqlite"
        let database = try Database(path: path)
        try schema.migrate(database)
        for name in names { try database.run("INSERT INTO items (name) VALUES (?)", name) }
        return (scratch, folder, path)
    }

    /// Each file in `folder` with its size, modification time and contents.
    static func state(of folder: String) throws -> [String: String] {
        var state: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            let path = folder + "/" + name
            var status = stat()
            #expect(stat(path, &status) == 0)
            state[name] = "\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec) \(try Data(contentsOf: URL(fileURLWithPath: path)).base64EncodedString())"
        }
        return state
    }

    static func names(_ database: Database) throws -> [String] {
        try database.statement("SELECT name FROM items ORDER BY id").query(reading: NameColumn.self) { $0.text(.name) ?? "" }
    }

    @Test func aDatabaseOpenedToReadChangesNothing() throws {
        let (scratch, folder, path) = try Self.database(["a", "b"])
        defer { try? FileManager.default.removeItem(atPath: scratch) }   // scratch
        let before = try Self.state(of: folder)
        #expect(before.keys.sorted() == ["monsoon.sqlite"])
        let database = try Database(readingOnly: path)
        #expect(database.isReadOnly)
        try Self.schema.migrate(database)
        #expect(try Self.names(database) == ["a", "b"])
        let write = #expect(throws: StoreError.self) { try database.run("INSERT INTO items (name) VALUES ('c')") }
        #expect(write?.isReadOnly == true)
        withExtendedLifetime(database) {}
        #expect(try Self.state(of: folder) == before)
    }

    /// A snapshot taken while a connection was open holds its last transactions in the log only.
    @Test func theTransactionsInALogBesideItAreRead() throws {
        let (scratch, folder, path) = try Self.database(["a"])
        defer { try? FileManager.default.removeItem(atPath: scratch) }   // scratch
        let snapshot = folder + " snapshot"
        do {
            let open = try Database(path: path)   // keeps the log: the last connection to close would write it into the database
            try Database(path: path).run("INSERT INTO items (name) VALUES ('b')")
            try FileManager.default.copyItem(atPath: folder, toPath: snapshot)
            withExtendedLifetime(open) {}
        }
        let copied = snapshot + "/monsoon.sqlite"
        let before = try Self.state(of: snapshot)
        #expect(before.keys.sorted() == ["monsoon.sqlite", "monsoon.sqlite-shm", "monsoon.sqlite-wal"])
        #expect(try Self.names(Database(readingOnly: copied)) == ["a", "b"])
        #expect(try Self.state(of: snapshot) == before)
    }

    @Test func aSchemaToBringUpToDateIsRefusedAndReadFromACopy() throws {
        let (scratch, folder, path) = try Self.database(["a"])
        defer { try? FileManager.default.removeItem(atPath: scratch) }   // scratch
        let before = try Self.state(of: folder)
        let database = try Database(readingOnly: path)
        let older = #expect(throws: StoreError.self) { try Self.newer.migrate(database) }
        #expect(older?.code == .olderSchema)
        #expect(older?.message == "the database \(path) has items schema version 1, older than this Monsoon's (2), and is open only to read, "
                + "so it cannot be brought up to date; open it once with a command that writes, where it can be written")
        let missing = #expect(throws: StoreError.self) { try Migrator(component: "others", Self.schema.migrations).migrate(database) }
        #expect(missing?.code == .olderSchema && missing?.message.contains("has no others tables") == true, "\(String(describing: missing))")
        let newer = #expect(throws: StoreError.self) { try Migrator(component: "items", []).migrate(database) }
        #expect(newer?.code == .newerSchema)

        let copy = try Database.inMemoryCopy(of: path)
        #expect(!copy.isReadOnly && copy.path == path)
        try Self.newer.migrate(copy)
        try copy.run("UPDATE items SET size = 3")
        #expect(try copy.scalarInt("SELECT size FROM items WHERE name = 'a'") == 3)
        withExtendedLifetime(database) {}
        #expect(try Self.state(of: folder) == before)
    }

    @Test func aMissingOrEmptyFileIsAnErrorAndNothingIsCreated() throws {
        let folder = DatabaseFileTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }   // scratch
        let path = folder + "/monsoon.sqlite"
        let missing = #expect(throws: StoreError.self) { try Database(readingOnly: path) }
        #expect(missing?.code.primary == .cantOpen)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let empty = #expect(throws: StoreError.self) { try Database(readingOnly: path) }
        #expect(empty?.isCorrupt == true)
    }

    @Test func aPathIsPercentEncodedInItsURI() {
        #expect(Database.uri("/home/a b/?#%é", query: "mode=ro") == "file:///home/a%20b/%3F%23%25%C3%A9?mode=ro")
        #expect(Database.uri("relative/x", query: "immutable=1") == "file:relative/x?immutable=1")
    }
}
