import CSQLite
import FoundationEssentials

/// A prepared statement.
///
/// - Important: like its `Database`, confined to one thread at a time; never `Sendable`.
public final class Statement {
    let raw: OpaquePointer
    unowned let database: Database
    public let sql: String
    /// How many parameters it has: values for all of them leave none of the last ones bound.
    private let parameterCount: Int
    /// Per column type read from it: where each column is in the result (`positions(of:)`).
    var resultPositions: [ObjectIdentifier: [Int32]] = [:]
    /// Per column type bound to it: the column of each parameter (`bind(_:)` of `ColumnValues`).
    var parameterColumnsByType: [ObjectIdentifier: [Int]] = [:]

    init(database: Database, sql: String) throws(StoreError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(database.raw, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw database.error(code, sql)
        }
        self.raw = statement
        self.database = database
        self.sql = sql
        parameterCount = Int(sqlite3_bind_parameter_count(statement))
    }

    deinit { sqlite3_finalize(raw) }

    /// Binds `values` to the parameters ?1, ?2, … in order, after a reset.
    public func bind(_ values: [SQLValueConvertible]) throws(StoreError) {
        sqlite3_reset(raw)
        clearBindings(past: values.count)
        for (offset, value) in values.enumerated() { try bind(value.sqlValue, at: Int32(offset + 1)) }
    }

    /// Unbinds the last run's values when `count` new ones will not cover every parameter (an
    /// unbound one is NULL). A row's insert or update binds them all: clearing first would cost
    /// a pass over every parameter for nothing.
    private func clearBindings(past count: Int) {
        if count < parameterCount { sqlite3_clear_bindings(raw) }
    }

    func bind(_ value: SQLValue, at index: Int32) throws(StoreError) {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(raw, index)
        case .integer(let number): code = sqlite3_bind_int64(raw, index, number)
        case .real(let number): code = sqlite3_bind_double(raw, index, number)
        case .text(let text):
            // withCString borrows a native string's own storage: no copy per value.
            code = text.withCString { monsoon_sqlite_bind_text(raw, index, $0, Int32(text.utf8.count)) }
        case .blob(let data):
            code = data.withUnsafeBytes { monsoon_sqlite_bind_blob(raw, index, $0.baseAddress, Int32($0.count)) }
        }
        guard code == SQLITE_OK else { throw database.error(code, sql) }
    }

    /// Steps once: true when a row is ready to read.
    public func step() throws(StoreError) -> Bool {
        let code = sqlite3_step(raw)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            sqlite3_reset(raw)
            throw database.error(code, sql)
        }
    }

    /// Runs a statement that returns no rows.
    public func run(_ values: SQLValueConvertible...) throws(StoreError) {
        try run(values)
    }

    /// Runs a statement that returns no rows, with its values in an array (a chunk of ids).
    public func run(_ values: [SQLValueConvertible]) throws(StoreError) {
        try bind(values)
        while try step() {}
        sqlite3_reset(raw)
    }
}
