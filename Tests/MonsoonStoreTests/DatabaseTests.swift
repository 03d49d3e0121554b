import Foundation
import Testing
@testable import MonsoonStore

private func temporaryPath(_ name: String = "test.sqlite") -> (folder: String, path: String) {
    let folder = (FileManager.default.temporaryDirectory.path(percentEncoded: false) as NSString).appendingPathComponent("monsoon-store-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return (folder, (folder as NSString).appendingPathComponent(name))
}

private let schema = Migrator(component: "items", [
    .init(version: 1, sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, size INTEGER, seen REAL, blob BLOB)"),
    .init(version: 2, sql: "ALTER TABLE items ADD COLUMN note TEXT"),
])

private enum ValueColumn: Int, TableColumn { case name, size, seen, blob, note }
private enum XColumn: Int, TableColumn { case x }

@Suite struct DatabaseTests {
    @Test func valuesRoundTrip() throws {
        let database = try Database(path: ":memory:")
        try schema.migrate(database)
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        try database.run("INSERT INTO items (name, size, seen, blob, note) VALUES (?, ?, ?, ?, ?)", "épisode \"1\"", 42, date, Data([0, 1, 2]), String?.none)
        let rows = try database.statement("SELECT name, size, seen, blob, note FROM items").query(reading: ValueColumn.self) { row in
            (row.text(.name), row.optionalInt(.size), row.date(.seen), row.data(.blob), row.text(.note))
        }
        #expect(rows.count == 1)
        #expect(rows[0].0 == "épisode \"1\"")
        #expect(rows[0].1 == 42)
        #expect(rows[0].2 == date)
        #expect(rows[0].3 == Data([0, 1, 2]))
        #expect(rows[0].4 == nil)
        #expect(try schema.version(of: database) == 2)
    }

    @Test func aFailedTransactionRollsBack() throws {
        let database = try Database(path: ":memory:")
        try schema.migrate(database)
        #expect(throws: StoreError.self) {
            try database.write {
                try database.run("INSERT INTO items (name) VALUES (?)", "a")
                try database.run("INSERT INTO items (name) VALUES (?)", "a")   // UNIQUE violation
            }
        }
        #expect(try database.scalarInt("SELECT count(*) FROM items") == 0)
        do {
            try database.run("INSERT INTO items (name) VALUES (NULL)")
        } catch {
            #expect(error.isConstraintViolation)
            #expect(error.message.contains("NOT NULL"))
        }
    }

    @Test func fileDatabasesUseWALAndMigrateOnce() throws {
        let (folder, path) = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do {
            let database = try Database(path: path)
            try schema.migrate(database)
            try schema.migrate(database)
            #expect(try database.scalarText("PRAGMA journal_mode") == "wal")
            try database.run("INSERT INTO items (name) VALUES ('kept')")
        }
        let reopened = try Database(path: path)
        try schema.migrate(reopened)
        #expect(try reopened.scalarInt("SELECT count(*) FROM items") == 1)
        #expect(try reopened.integrityCheck() == "ok")
    }

    @Test func aNewerSchemaIsRefusedAndLeftAlone() throws {
        let (folder, path) = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do {
            let database = try Database(path: path)
            try database.execute("CREATE TABLE schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL); INSERT INTO schema_versions VALUES ('items', 99)")
        }
        let database = try Database(path: path)
        do {
            try schema.migrate(database)
            Issue.record("a newer schema must be refused")
        } catch let error as StoreError {
            #expect(error.code == .newerSchema)
            #expect(error.message.contains("schema version 99"))
            #expect(error.message.contains("newer"))
        }
        #expect(try schema.version(of: database) == 99)
        #expect(try database.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'items'") == 0)
    }

    @Test func aCorruptFileIsReportedAndNeverOverwritten() throws {
        let (folder, path) = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        do {
            _ = try Database(path: path)
            Issue.record("a corrupt file must not open")
        } catch {
            #expect(error.isCorrupt)
            #expect(error.message.contains(path))
            #expect(error.message.contains("left untouched"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func anUnwritableFolderIsAClearError() throws {
        do {
            _ = try Database(path: "/proc/monsoon-cannot-be-here/monsoon.sqlite")
            Issue.record("expected an error")
        } catch {
            #expect(error.message == "cannot create the database /proc/monsoon-cannot-be-here/monsoon.sqlite: No such file or directory; check that its folder exists and can be written")
        }
    }

    @Test func twoConnectionsWritingAtOnceNeverFailWithLocked() async throws {
        let (folder, path) = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do {
            let database = try Database(path: path)
            try schema.migrate(database)
        }
        let writers = 4
        let perWriter = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    let database = try Database(path: path)
                    for index in 0..<perWriter {
                        try database.write {
                            try database.run("INSERT INTO items (name, size) VALUES (?, ?)", "\(writer)-\(index)", index)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let database = try Database(path: path)
        #expect(try database.scalarInt("SELECT count(*) FROM items") == writers * perWriter)
    }

    @Test func dataVersionMovesWhenAnotherConnectionCommits() throws {
        let (folder, path) = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let watcher = try Database(path: path)
        try schema.migrate(watcher)
        let before = try watcher.dataVersion()
        let writer = try Database(path: path)
        try writer.run("INSERT INTO items (name) VALUES ('x')")
        #expect(try watcher.dataVersion() != before)
        let own = try watcher.dataVersion()
        try watcher.run("INSERT INTO items (name) VALUES ('y')")
        #expect(try watcher.dataVersion() == own, "its own commits do not move it")
    }
}

@Suite struct NestedWriteTests {
    @Test func aWriteInsideAWriteIsASavepoint() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (x INTEGER)")
        struct Failure: Error {}
        try database.write {
            try database.run("INSERT INTO t VALUES (1)")
            #expect(throws: Failure.self) {
                try database.write {
                    try database.run("INSERT INTO t VALUES (2)")
                    throw Failure()
                }
            }
            try database.write { try database.run("INSERT INTO t VALUES (3)") }
        }
        #expect(try database.statement("SELECT x FROM t ORDER BY x").query(reading: XColumn.self) { $0.int(.x) } == [1, 3], "the failed inner write alone is undone")
    }
}
