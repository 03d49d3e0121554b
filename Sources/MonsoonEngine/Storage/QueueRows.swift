import Foundation
import MonsoonStore

/// The engine's rows as every `QueueStore` keeps them, whatever the database: the columns, what
/// a record writes into them, and how a row reads back. Each store writes its own SQL around
/// these (its placeholders, its types), so a second store cannot drift from the first one's
/// mapping: the values and the decoding are shared, and the conformance suite checks the rest.
///
/// Dates are seconds since 1970 as a double (SQLite's `REAL`, PostgreSQL's `float8`): exact both ways.
package enum QueueRows {
    /// The columns `DownloadRecord(row:)` reads, in its order.
    package static let recordColumns = """
        seq, id, url, destination_kind, destination, priority, expected_size, expected_type, headers, user_info,
        status, attempts, backoff_level, retry_at, error_code, error_message, error_status, bytes, total, checkpoint,
        file_path, resume_url, etag, last_modified, resume_total, file_stem, final_url, size_limit, size_limit_reason, root, addresses, follows_redirects
        """

    /// The columns an insert writes, in `DownloadRecord.insertParameters`' order.
    package static let insertColumns = """
        id, url, destination_kind, destination, priority, expected_size, expected_type, headers, user_info,
        status, attempts, backoff_level, retry_at, error_code, error_message, error_status, bytes, total, checkpoint,
        file_path, resume_url, etag, last_modified, resume_total, updated, seq, file_stem, size_limit, size_limit_reason, root, addresses, follows_redirects
        """

    /// The columns an update writes, each with the number of its parameter in
    /// `DownloadRecord.updateParameters` (1 is the id, 20 the sequence: the row's key).
    package static let updateAssignments: [(column: String, parameter: Int)] = [
        ("priority", 2), ("status", 3), ("attempts", 4), ("backoff_level", 5), ("retry_at", 6), ("error_code", 7),
        ("error_message", 8), ("error_status", 9), ("bytes", 10), ("total", 11), ("checkpoint", 12), ("file_path", 13),
        ("resume_url", 14), ("etag", 15), ("last_modified", 16), ("resume_total", 17), ("updated", 18), ("final_url", 19),
    ]

    /// The columns `StoredDownloadState(row:)` reads, in its order.
    package static let stateColumns = """
        id, status, bytes, total, retry_at, error_code, error_message, file_path, final_url, etag, last_modified, root, updated, url
        """

    /// The columns `DownloadSummary(row:)` reads, in its order, but the last: the error to show,
    /// which each store selects as `summaryError` says.
    package static let summaryColumns = "id, url, destination_kind, destination, status, bytes, total, file_path"

    /// `addresses`: nil for `any` (every row before the column, and most after it).
    static func addressesColumn(_ scope: AddressScope) -> String? {
        scope == .any ? nil : scope.rawValue
    }

    /// `follows_redirects`: nil when it does (every row before the column, and most after it).
    static func followsRedirectsColumn(_ follows: Bool) -> Int? {
        follows ? nil : 0
    }

    /// A queued download's error is an earlier attempt's, unless it waits for room on its disk:
    /// a listing shows no error for it.
    package static let listedErrorCode = DownloadError.Code.notEnoughDiskSpace.rawValue

    /// A listing's row, from `summaryColumns` followed by the error to show.
    package static func summary(_ row: some QueueRowReading) -> DownloadSummary {
        let status = row.text(4).flatMap(DownloadStatus.init(rawValue:)) ?? .queued
        return DownloadSummary(
            id: DownloadID(row.text(0) ?? ""), url: row.text(1) ?? "", isFolder: row.text(2) == "directory",
            destination: row.text(3) ?? "", status: status, bytes: row.int(5), total: row.optionalInt(6),
            filePath: row.text(7), error: row.text(8))
    }

    /// The statuses of downloads that will run, for `pending()`.
    package static let pendingStatuses: [DownloadStatus] = [.queued, .waitingToRetry, .downloading]

    /// `pending()`'s answer from one row of `id, coalesce(resume_total, total, expected_size), bytes, destination_kind, destination`.
    package static func pending(_ row: some QueueRowReading) -> (id: DownloadID, remaining: Int?, folder: String) {
        let destination = row.text(4) ?? ""
        let folder = row.text(3) == "file" ? LocalFile.folder(of: destination) : destination
        return (DownloadID(row.text(0) ?? ""), row.optionalInt(1).map { max(0, $0 - row.int(2)) }, folder)
    }

    /// What `updateRequest` writes: the kind and folder of `destination` as the row keeps them.
    package static func destinationColumns(_ destination: DownloadRequest.Destination) -> (kind: String, path: String) {
        switch destination {
        case .file(let path): ("file", path)
        case .directory(let path), .named(let path, _): ("directory", path)
        case .discard: ("directory", "")   // never stored: a store refuses it at enqueue
        }
    }
}

/// A row read by column number (from 0), as SQLite's `Row` reads one; a PostgreSQL store gives
/// its rows the same face.
package protocol QueueRowReading {
    func text(_ index: Int32) -> String?
    /// `NULL` reads as 0.
    func int(_ index: Int32) -> Int
    func optionalInt(_ index: Int32) -> Int?
    /// Seconds since 1970, or nil for `NULL`.
    func date(_ index: Int32) -> Date?
}

extension Row: QueueRowReading {}

extension DownloadRecord {
    /// A download added by a process that does not run the queue (`QueueStore.add`): its file
    /// path set for a file destination, and `d<sequence>` as its id when the request has none.
    package static func added(_ request: DownloadRequest, sequence: Int) -> DownloadRecord {
        var record = DownloadRecord(request: request, sequence: sequence, host: "")
        if case .file(let path) = request.destination { record.filePath = path }
        if request.id.rawValue.isEmpty { record.request.id = DownloadID("d\(sequence)") }
        return record
    }

    /// `init(row:)`; for a row that cannot be read, nil once `skippingUnreadable` has its error
    /// (a streamed restore goes on past one damaged row), else the error.
    package static func read(_ row: some QueueRowReading, skippingUnreadable: ((Error) -> Void)?) throws -> DownloadRecord? {
        do {
            return try DownloadRecord(row: row)
        } catch {
            guard let skippingUnreadable else { throw error }
            skippingUnreadable(error)
            return nil
        }
    }

    /// The download's id.
    package var id: DownloadID { request.id }

    /// The enqueue order it was saved with.
    package var savedSequence: Int { sequence }

    /// A listing's copy of the row.
    package var listed: Download { snapshot() }

    /// The values of `QueueRows.insertColumns`, `updated` being now (the sequence is nil for 0: the next one).
    package var insertParameters: [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(32)
        appendInsertValues(to: &values)
        values.append(Date().sqlValue)
        values.append((sequence > 0 ? sequence : nil).sqlValue)
        values.append(request.destination.stem.sqlValue)
        values.append((request.sizeLimit?.bytes).sqlValue)
        values.append((request.sizeLimit?.reason).sqlValue)
        values.append(request.root.sqlValue)
        values.append(QueueRows.addressesColumn(request.addresses).sqlValue)
        values.append(QueueRows.followsRedirectsColumn(request.followsRedirects).sqlValue)
        return values
    }

    /// The update's parameters, numbered as `QueueRows.updateAssignments` says: the id first,
    /// the sequence last. The sequence too: a save that was queued for a download since removed
    /// and added again under the same id must not overwrite the new one.
    package var updateParameters: [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(20)
        appendUpdateValues(to: &values)
        values.append(Date().sqlValue)
        values.append(finalURL.sqlValue)
        values.append(sequence.sqlValue)
        return values
    }

    /// The URL to write beside the state, only for a download whose URL changed (a renewed
    /// link), in the same transaction: the indexed column is not rewritten by every other save.
    package var changedURL: String? { urlChanged ? request.url.absoluteString : nil }
}
