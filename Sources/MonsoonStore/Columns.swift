/// A list of columns of one table, in order, as SQL: a `SELECT` list, an `INSERT`'s columns and
/// its named parameters, an `UPDATE`'s assignments. Parameters are named for their columns
/// (`:final_url`), so `ColumnValues` binds each value to its own column, whatever the order.
///
/// Build one once (a `static let`), not per statement: it builds its strings when made.
public struct Columns<Column: TableColumn>: Sendable {
    public let columns: [Column]
    /// Their names, comma-separated: a `SELECT` list, or an `INSERT`'s column list.
    public let list: String
    /// Their parameters, comma-separated (`:id, :url`): an `INSERT`'s values.
    public let parameters: String
    /// `name = :name` for each, comma-separated: an `UPDATE`'s `SET`.
    public let assignments: String

    /// The columns named, in this order.
    public init(_ columns: [Column]) {
        self.columns = columns
        let names = Column.names.byValue
        list = columns.map { names[$0.rawValue] }.joined(separator: ", ")
        parameters = columns.map { ":" + names[$0.rawValue] }.joined(separator: ", ")
        assignments = columns.map { "\(names[$0.rawValue]) = :\(names[$0.rawValue])" }.joined(separator: ", ")
    }

    /// Every column, in the cases' order.
    public static var all: Columns { Columns(Array(Column.allCases)) }

    /// Every column but `excluded`, in the cases' order.
    public static func all(except excluded: Set<Column>) -> Columns {
        Columns(Column.allCases.filter { !excluded.contains($0) })
    }

    /// `name = :name` for a column outside the list (a `WHERE` clause's key, say).
    public static func match(_ column: Column) -> String { "\(column.sqlName) = :\(column.sqlName)" }
}
