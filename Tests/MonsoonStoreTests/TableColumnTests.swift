import Foundation
import Testing
@testable import MonsoonStore

/// The columns of the test's table, deliberately in another order than the table's own, with
/// `note` (added by the second step, last in the table) in the middle.
private enum ItemColumn: Int, TableColumn {
    case size, note, id, finalURL, name, seen, blob

    var sqlName: String {
        switch self {
        case .blob: "payload"   // a column whose SQL name is not its case's
        default: Self.snakeCase(stringValue)
        }
    }
}

private enum CountColumn: Int, TableColumn { case status, count }

private let schema = Migrator(component: "items", [
    .init(version: 1, sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, size INTEGER, seen REAL, payload BLOB, final_url TEXT)"),
    .init(version: 2, sql: "ALTER TABLE items ADD COLUMN note TEXT"),
])

@Suite struct TableColumnTests {
    private func openFile() throws -> (Database, String) {
        let folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-columns-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let database = try Database(path: folder + "/items.sqlite")
        try schema.migrate(database)
        return (database, folder)
    }

    @Test func namesAreTheCasesInSnakeCaseUnlessAColumnSaysOtherwise() {
        #expect(ItemColumn.finalURL.sqlName == "final_url")
        #expect(ItemColumn.blob.sqlName == "payload")
        #expect(ItemColumn.snakeCase("retryAt") == "retry_at")
        #expect(ItemColumn.snakeCase("resumeURLText") == "resume_url_text")
        #expect(ItemColumn.snakeCase("id") == "id")
        let columns = Columns<ItemColumn>([.id, .finalURL])
        #expect(columns.list == "id, final_url")
        #expect(columns.parameters == ":id, :final_url")
        #expect(columns.assignments == "id = :id, final_url = :final_url")
    }

    @Test func aRowWrittenAndReadByColumnKeepsEachValueInItsColumn() throws {
        let (database, folder) = try openFile()
        defer { try? FileManager.default.removeItem(atPath: folder) }   // the test's own folder: a leftover costs a few KiB of /tmp, nothing a test reads
        let all = Columns<ItemColumn>.all(except: [.id])
        let seen = Date(timeIntervalSince1970: 1_700_000_000.25)
        var values = ColumnValues<ItemColumn>()
        values[.name] = .text("first")
        values[.size] = 42.sqlValue
        values[.seen] = seen.sqlValue
        values[.blob] = Data([0, 1, 2]).sqlValue
        values[.note] = .text("added later")
        values[.finalURL] = .text("https://example.com/a")
        try database.statement("INSERT INTO items (\(all.list)) VALUES (\(all.parameters))").run(values)

        // The table's own order (SELECT *) and the cases' order both read right: columns are matched by name.
        for sql in ["SELECT * FROM items", "SELECT \(Columns<ItemColumn>.all.list) FROM items"] {
            let rows = try database.statement(sql).query(reading: ItemColumn.self) { row in
                (row.int(.id), row.text(.name), row.optionalInt(.size), row.date(.seen), row.data(.blob), row.text(.note), row.text(.finalURL))
            }
            #expect(rows.count == 1)
            #expect(rows.first?.1 == "first")
            #expect(rows.first?.2 == 42)
            #expect(rows.first?.3 == seen)
            #expect(rows.first?.4 == Data([0, 1, 2]))
            #expect(rows.first?.5 == "added later")
            #expect(rows.first?.6 == "https://example.com/a")
        }

        // An update binds by name too: the key's parameter comes last in the SQL, first in no table.
        let changed = Columns<ItemColumn>([.note, .size])
        var update = ColumnValues<ItemColumn>()
        update[.id] = 1.sqlValue
        update[.size] = .null
        update[.note] = .text("changed")
        try database.statement("UPDATE items SET \(changed.assignments) WHERE \(Columns<ItemColumn>.match(.id))").run(update)
        let row = try database.statement("SELECT note, size, name FROM items").first(reading: ItemColumn.self) { row in
            (row.text(.note), row.optionalInt(.size), row.isNull(.size), row.text(.name))
        }
        #expect(row?.0 == "changed")
        #expect(row?.1 == nil)
        #expect(row?.2 == true)
        #expect(row?.3 == "first")
    }

    @Test func anAliasNamesAComputedColumn() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (status TEXT); INSERT INTO t VALUES ('a'), ('a'), ('b')")
        let counts = try database.statement("SELECT count(*) AS count, status FROM t GROUP BY status ORDER BY status")
            .query(reading: CountColumn.self) { ($0.text(.status), $0.int(.count)) }
        #expect(counts.map(\.0) == ["a", "b"])
        #expect(counts.map(\.1) == [2, 1])
    }

    @Test func aParameterThatNamesNoColumnFailsToBind() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (status TEXT)")
        var values = ColumnValues<CountColumn>()
        values[.status] = .text("a")
        #expect(throws: StoreError.self) {
            try database.statement("INSERT INTO t (status) VALUES (:state)").run(values)
        }
        try database.statement("INSERT INTO t (status) VALUES (:status)").run(values)
        #expect(try database.scalarText("SELECT status FROM t") == "a")
    }
}
