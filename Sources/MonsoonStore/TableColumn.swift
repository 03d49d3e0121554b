/// The columns of one table, one case per column: SQL is written from them and rows are read
/// by them, never by a position typed by hand.
///
/// ```swift
/// enum ItemColumn: Int, TableColumn { case id, name, sizeLimit }   // size_limit
/// let select = "SELECT \(Columns<ItemColumn>.all.list) FROM items"
/// try database.statement(select).query(reading: ItemColumn.self) { row in row.text(.sqlName) }
/// ```
///
/// A statement's result columns are matched to the cases by name once per statement (see
/// `TableRow`), so the order of the cases, of a `SELECT` list and of the table's own columns
/// need not agree: a column added anywhere reads right.
///
/// The raw values are the cases' positions (0, 1, 2 …, which an `Int` enum gives by default):
/// a read looks its column up in an array, with no hashing and no allocation.
public protocol TableColumn: RawRepresentable, CaseIterable, Hashable, Sendable where RawValue == Int {
    /// The column's name in SQL; by default the case's name in snake case (`finalURL` is
    /// `final_url`). A column whose name is otherwise implements it.
    var sqlName: String { get }
}

extension TableColumn {
    /// The case's name in snake case: `retryAt` is `retry_at`, `finalURL` `final_url`.
    public var sqlName: String { Self.snakeCase(String(describing: self)) }

    /// `camelCase` as `camel_case`; a run of capitals is one word (`resumeURLText` is `resume_url_text`).
    public static func snakeCase(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) { result.append("_") }
            }
            result.append(contentsOf: character.lowercased())
        }
        return result
    }

    /// How many cases there are, checking that the raw values are their positions: each case's
    /// slot in a row's lookup table is its raw value.
    static var caseCount: Int {
        let all = allCases
        for (position, column) in all.enumerated() {
            precondition(column.rawValue == position, "\(Self.self).\(column) has the raw value \(column.rawValue), not its position \(position)")
        }
        return all.count
    }
}
