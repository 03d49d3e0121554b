@testable import MonsoonCluster

/// A column by its position from 0, for the tests' own short queries (`count(*)` and the like):
/// the sources read every row by name, so only the tests may name a position.
extension Int: PostgresColumn {
    public func position(in columns: [String]) -> Int? { columns.indices.contains(self) ? self : nil }
}
