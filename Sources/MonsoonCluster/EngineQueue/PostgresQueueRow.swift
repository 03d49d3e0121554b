import Foundation
import MonsoonEngine
import MonsoonStore

/// A row of the engine's tables as the shared row mapping reads one (`QueueRowReading`), by
/// column number. The columns are PostgreSQL's own `bigint`, `float8` and `text`, whose text
/// always parses: a value that did not would be the server's mistake, read as `NULL`.
struct PostgresQueueRow: QueueRowReading {
    let row: PostgresRow

    init(_ row: PostgresRow) { self.row = row }

    func text(_ index: Int32) -> String? { row.values[Int(index)] }
    func int(_ index: Int32) -> Int { optionalInt(index) ?? 0 }
    func optionalInt(_ index: Int32) -> Int? { text(index).flatMap { Int($0) } }
    func date(_ index: Int32) -> Date? { text(index).flatMap { Double($0) }.map(Date.init(timeIntervalSince1970:)) }
}

extension SQLValue {
    /// The value as a statement's parameter: dates are already seconds since 1970 (a double).
    var postgresValue: PostgresValue? {
        switch self {
        case .null: nil
        case .integer(let value): value
        case .real(let value): value
        case .text(let value): value
        // No column of the engine's is a blob; bytea's hex form, should one ever be.
        case .blob(let data): "\\x" + data.map { String(format: "%02x", $0) }.joined()
        }
    }
}
