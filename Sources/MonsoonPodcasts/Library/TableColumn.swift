import Foundation
import MonsoonStore

/// A column of one of the library's tables, as a case of its table's enum: the SQL name comes
/// from the case (`enclosureURL` is `enclosure_url`) unless the enum gives its own.
///
/// A stand-in, local to the podcast layer, for MonsoonStore's column API (issue 46), to be
/// swapped for it once that is merged: only this file and `ColumnRow` know how a column is found.
protocol TableColumn: CaseIterable, RawRepresentable<Int32>, Hashable where AllCases == [Self] {
    /// The column's SQL name, or the expression selected under this case.
    var name: String { get }
}

extension TableColumn {
    var name: String { Self.snakeCase(String(describing: self)) }

    /// `podcastID` → `podcast_id`, `bytesOnDisk` → `bytes_on_disk`.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        var previous: Character?
        for character in name {
            if character.isUppercase, let previous, previous.isLowercase || previous.isNumber { out.append("_") }
            out.append(contentsOf: character.lowercased())
            previous = character
        }
        return out
    }
}

/// A SELECT list of some of a table's columns (all of them by default, in the enum's order), each
/// read back by its case: where a column lands in the list is worked out once, when the list is
/// made (a static of its query), so a read costs an array index, never a search.
struct Selection<Column: TableColumn>: Sendable {
    /// The list, for the SQL: `id, podcast_id, …`.
    let sql: String
    fileprivate let places: [Int32]

    init(_ columns: [Column] = Column.allCases) {
        sql = columns.map(\.name).joined(separator: ", ")
        var places = [Int32](repeating: -1, count: Column.allCases.count)
        for (place, column) in columns.enumerated() { places[Int(column.rawValue)] = Int32(place) }
        self.places = places
    }
}

/// The current row of a statement that selected a `Selection`, read by column.
struct ColumnRow<Column: TableColumn> {
    private let row: Row
    private let places: [Int32]

    init(_ row: Row, _ selection: Selection<Column>) {
        self.row = row
        places = selection.places
    }

    private func place(_ column: Column) -> Int32 {
        let place = places[Int(column.rawValue)]
        assert(place >= 0, "\(column) is not in the query's selection")
        return place
    }

    func text(_ column: Column) -> String? { row.text(place(column)) }
    func int(_ column: Column) -> Int { row.int(place(column)) }
    func optionalInt(_ column: Column) -> Int? { row.optionalInt(place(column)) }
    func double(_ column: Column) -> Double { row.double(place(column)) }
    func bool(_ column: Column) -> Bool { row.bool(place(column)) }
    func date(_ column: Column) -> Date? { row.date(place(column)) }
}

extension Statement {
    /// Runs a query that selected `selection`, mapping each row.
    func query<Column, T>(_ selection: Selection<Column>, _ values: [SQLValueConvertible] = [], _ transform: (ColumnRow<Column>) throws -> T) throws -> [T] {
        try query(values) { try transform(ColumnRow($0, selection)) }
    }

    /// The first row of a query that selected `selection`, mapped, or nil.
    func first<Column, T>(_ selection: Selection<Column>, _ values: [SQLValueConvertible] = [], _ transform: (ColumnRow<Column>) throws -> T) throws -> T? {
        try first(values) { try transform(ColumnRow($0, selection)) }
    }
}
