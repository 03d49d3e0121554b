import FoundationEssentials
import MonsoonStore

/// What those who follow the queue ask of it: the states of downloads by id, in batches
/// (it reads its own rows first, then asks here, so its tables may live elsewhere).
extension DownloadStore {
    package func states(of ids: [DownloadID]) throws -> [StoredDownloadState] {
        var found: [StoredDownloadState] = []
        try Self.inChunks(ids) { marks, values in
            found += try database.statement("SELECT \(QueueRows.stateColumns.list) FROM downloads WHERE id IN (\(marks)) ORDER BY seq")
                .query(values, reading: DownloadColumn.self, StoredDownloadState.init(row:))
        }
        return found
    }

    package func forEachState(ownedBy owner: DownloadOwner, changedSince since: Date?, _ body: (StoredDownloadState) throws -> Void) throws {
        try database.statement("""
            SELECT \(QueueRows.stateColumns.list) FROM downloads WHERE owner = ?1 AND (?2 IS NULL OR updated >= ?2) ORDER BY seq
            """).forEach([owner.rawValue, since], reading: DownloadColumn.self) { try body(try StoredDownloadState(row: $0)) }
    }

    /// Ids per statement: below SQLite's oldest limit on parameters (999).
    package static let chunkSize = 500

    /// Runs `body` once per chunk of `ids`, with the chunk's placeholders ("?, ?, …") and
    /// values: SQLite allows a limited number of parameters per statement. A chunk's list is
    /// padded to a power of two (its last id again: `IN` is a set), so the statements, cached by
    /// their text, are a handful: the rows read ahead of their start come in chunks of any size,
    /// and each new size was a statement prepared again.
    static func inChunks(_ ids: [DownloadID], _ body: (String, [SQLValueConvertible]) throws -> Void) throws {
        for start in stride(from: 0, to: ids.count, by: chunkSize) {
            let slice = ids[start..<min(ids.count, start + chunkSize)]
            var values: [SQLValueConvertible] = slice.map(\.rawValue)
            let padded = min(chunkSize, max(4, 1 << (Int.bitWidth - (slice.count - 1).leadingZeroBitCount)))
            if let last = slice.last { values += repeatElement(last.rawValue as SQLValueConvertible, count: max(0, padded - slice.count)) }
            try body(Array(repeating: "?", count: values.count).joined(separator: ", "), values)
        }
    }

    /// Statuses as an SQL list: their raw values are our own identifiers, safe to write into the SQL text.
    static func sqlList(_ statuses: Set<DownloadStatus>) -> String {
        statuses.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")
    }
}
