import CSQLite
import FoundationEssentials

/// The current row of a statement, read by column: `row.text(.url)`. Valid only while stepping.
///
/// Each column's position in the statement's result was found by name once for the statement
/// (`Statement.positions(of:)`); a read is an array lookup. Reading a column the statement did
/// not select is a mistake in the code, and stops the program saying so.
public struct TableRow<Column: TableColumn> {
    let statement: Statement
    /// By the column's raw value: its position in the result, or -1 when not selected.
    let positions: [Int32]

    init(statement: Statement) throws(StoreError) {
        self.statement = statement
        positions = try statement.positions(of: Column.self)
    }

    private func position(_ column: Column) -> Int32 {
        let position = positions[column.rawValue]
        precondition(position >= 0, "the statement does not select the column \(column.sqlName): \(statement.sql)")
        return position
    }

    /// Whether `column` is `NULL`.
    public func isNull(_ column: Column) -> Bool { sqlite3_column_type(statement.raw, position(column)) == SQLITE_NULL }

    /// `column` as an integer; `NULL` reads as 0.
    public func int(_ column: Column) -> Int { Int(sqlite3_column_int64(statement.raw, position(column))) }

    /// `column` as an integer, or nil when it is `NULL`.
    public func optionalInt(_ column: Column) -> Int? { isNull(column) ? nil : int(column) }

    /// `column` as a double; `NULL` reads as 0.
    public func double(_ column: Column) -> Double { sqlite3_column_double(statement.raw, position(column)) }

    /// `column` as a boolean: any non-zero integer is true, `NULL` is false.
    public func bool(_ column: Column) -> Bool { int(column) != 0 }

    /// `column` as text, or nil when it is `NULL`. The text stops at its first NUL byte, if any.
    public func text(_ column: Column) -> String? {
        guard let pointer = sqlite3_column_text(statement.raw, position(column)) else { return nil }
        return String(cString: pointer)
    }

    /// `column` read as seconds since 1970, or nil when it is `NULL`.
    public func date(_ column: Column) -> Date? {
        isNull(column) ? nil : Date(timeIntervalSince1970: double(column))
    }

    /// `column` as bytes, or nil when it is `NULL`; an empty blob is empty data, not nil.
    public func data(_ column: Column) -> Data? {
        let position = position(column)
        guard let pointer = sqlite3_column_blob(statement.raw, position) else { return isNull(column) ? nil : Data() }
        return Data(bytes: pointer, count: Int(sqlite3_column_bytes(statement.raw, position)))
    }
}
