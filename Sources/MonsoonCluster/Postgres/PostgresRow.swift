import FoundationEssentials

/// A column of a row, by its name (a `String`): the code reads rows by name, never by a
/// position typed by hand, so a column added to a query cannot shift the others.
public protocol PostgresColumn: Sendable {
    /// The column's position among `columns`, or nil when there is no such column.
    func position(in columns: [String]) -> Int?
}

extension String: PostgresColumn {
    public func position(in columns: [String]) -> Int? { columns.firstIndex(of: self) }
}

/// One row of a result, read by column name: `row.string("title")` (an `AS` alias names an expression).
///
/// Every accessor returns nil for SQL `NULL`, and throws `.invalidValue` for a column that does
/// not exist or does not read as the type asked for: a mistake in the query, not in the data.
public struct PostgresRow: Sendable {
    public let columns: [String]
    /// Each column's text, as the server sent it; nil for `NULL`.
    let values: [String?]

    /// The column's text as the server sent it (any type has one), or nil for `NULL`.
    public func string(_ column: some PostgresColumn) throws(PostgresError) -> String? {
        guard let position = column.position(in: columns) else {
            throw PostgresError(code: .invalidValue, message: "a result has no column \(column) (its columns: \(columns.joined(separator: ", "))); please report this")
        }
        return values[position]
    }

    /// The column as a 64-bit integer (`bigint`, `integer`, `smallint`).
    public func int64(_ column: some PostgresColumn) throws(PostgresError) -> Int64? {
        try read(column, as: "an integer") { Int64($0) }
    }

    /// The column as an integer (`bigint`, `integer`, `smallint`).
    public func int(_ column: some PostgresColumn) throws(PostgresError) -> Int? {
        try read(column, as: "an integer") { Int($0) }
    }

    /// The column as a boolean (`boolean`, which the server writes `t` or `f`).
    public func bool(_ column: some PostgresColumn) throws(PostgresError) -> Bool? {
        try read(column, as: "a boolean") { $0 == "t" ? true : $0 == "f" ? false : nil }
    }

    /// The column as a double (`double precision`, `real`, `numeric`, or an integer).
    public func double(_ column: some PostgresColumn) throws(PostgresError) -> Double? {
        try read(column, as: "a number") { Double($0) }
    }

    /// The column as a date (`timestamptz`, written in ISO form, which the connection makes sure of).
    public func date(_ column: some PostgresColumn) throws(PostgresError) -> Date? {
        try read(column, as: "a timestamp with time zone") { PostgresTimestamp.date(from: $0) }
    }

    /// The column's text read by `parse`, which returns nil for text that is not `type`.
    private func read<T>(_ column: some PostgresColumn, as type: String, _ parse: (String) -> T?) throws(PostgresError) -> T? {
        guard let text = try string(column) else { return nil }
        guard let value = parse(text) else {
            throw PostgresError(code: .invalidValue, message: "the column \(column) of a result is not \(type); please report this")
        }
        return value
    }
}
