import MonsoonBasics

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
/// a read looks its column up in an array, with no hashing and no allocation. The names come from
/// the `CodingKey` conformance Swift writes for such an enum (`stringValue` is the case's name),
/// not from reflection, which costs the runtime tens of thousands of instructions a name.
public protocol TableColumn: RawRepresentable, CaseIterable, Hashable, Sendable, CodingKey where RawValue == Int {
    /// The column's name in SQL; by default the case's name in snake case (`finalURL` is
    /// `final_url`). A column whose name is otherwise implements it.
    var sqlName: String { get }
}

extension TableColumn {
    /// The case's name in snake case: `retryAt` is `retry_at`, `finalURL` `final_url`.
    public var sqlName: String { Self.snakeCase(stringValue) }

    /// `camelCase` as `camel_case`; a run of capitals is one word (`resumeURLText` is `resume_url_text`).
    /// On the bytes: case names are ASCII.
    public static func snakeCase(_ name: String) -> String {
        let bytes = Array(name.utf8)
        func isUpper(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
        func isLower(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + 4)
        for (index, byte) in bytes.enumerated() {
            if isUpper(byte), index > 0 {
                let previous = bytes[index - 1]
                let nextIsLower = index + 1 < bytes.count && isLower(bytes[index + 1])
                if isLower(previous) || (previous >= 0x30 && previous <= 0x39) || (isUpper(previous) && nextIsLower) { result.append(0x5F) }
            }
            result.append(isUpper(byte) ? byte | 0x20 : byte)
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Every case's `sqlName` by raw value, and each name's raw value: worked out once per table,
    /// as every statement prepared matches its columns and parameters by name (a name worked out
    /// from its case costs about a thousand instructions).
    static var names: ColumnNames { ColumnNames.of(Self.self) }
}

/// The SQL names of one table's columns (`TableColumn.names`).
struct ColumnNames: Sendable {
    /// By raw value.
    let byValue: [String]
    /// The raw value of each name.
    let byName: [String: Int]

    private static let known = Locked<[ObjectIdentifier: ColumnNames]>([:])

    static func of<Column: TableColumn>(_ type: Column.Type) -> ColumnNames {
        let key = ObjectIdentifier(type)
        if let names = known.withLock({ $0[key] }) { return names }
        // A case's slot in a row's lookup table is its raw value: they must be the positions.
        for (position, column) in Column.allCases.enumerated() {
            precondition(column.rawValue == position, "\(Column.self).\(column.stringValue) has the raw value \(column.rawValue), not its position \(position)")
        }
        let byValue = Column.allCases.map(\.sqlName)
        var byName: [String: Int] = [:]
        for (value, name) in byValue.enumerated() {
            precondition(byName.updateValue(value, forKey: name) == nil, "\(Column.self) names the column \(name) twice")
        }
        let names = ColumnNames(byValue: byValue, byName: byName)
        known.withLock { $0[key] = names }
        return names
    }
}
