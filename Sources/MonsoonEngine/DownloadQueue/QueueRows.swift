import FoundationEssentials
import MonsoonStore

/// The engine's rows as `DownloadStore` keeps them: which columns each statement writes or reads
/// (by `DownloadColumn`, never by position), and how the values of a listing read back.
///
/// Dates are seconds since 1970 as a double (SQLite's `REAL`): exact both ways.
package enum QueueRows {
    /// How many columns `downloads` has: the size of a row's values.
    static let columnCount = DownloadColumn.allCases.count

    /// The columns `DownloadRecord(row:)` reads.
    static let recordColumns = Columns<DownloadColumn>.all

    /// The columns an insert writes (`DownloadRecord.insertValues`): all but where the bytes came
    /// from, which only a response tells.
    static let insertColumns = Columns<DownloadColumn>.all(except: [.finalURL])

    /// The columns an update writes (`DownloadRecord.updateValues`): the state, never the
    /// identity or the request but its priority.
    static let updateColumns = Columns<DownloadColumn>([
        .priority, .status, .attempts, .backoffLevel, .retryAt, .errorCode, .errorMessage, .errorStatus, .bytes, .total, .checkpoint,
        .filePath, .resumeURL, .etag, .lastModified, .resumeTotal, .updated, .finalURL, .checksum,
    ])

    /// The columns `StoredDownloadState(row:)` reads.
    static let stateColumns = Columns<DownloadColumn>([
        .id, .owner, .status, .bytes, .total, .retryAt, .errorCode, .errorMessage, .filePath, .finalURL, .etag, .lastModified, .root, .updated, .url, .checksum,
    ])

    /// The columns `summary(_:)` reads.
    static let summaryColumns = Columns<DownloadColumn>([.id, .url, .destinationKind, .destination, .status, .bytes, .total, .filePath, .errorCode, .errorMessage, .owner])

    /// The columns `pending(_:)` reads.
    static let pendingColumns = Columns<DownloadColumn>([.id, .resumeTotal, .total, .expectedSize, .bytes, .destinationKind, .destination, .owner])

    /// `addresses`: nil for `any` (every row before the column, and most after it).
    static func addressesColumn(_ scope: AddressScope) -> String? {
        scope == .any ? nil : scope.rawValue
    }

    /// `follows_redirects`: nil when it does (every row before the column, and most after it).
    static func followsRedirectsColumn(_ follows: Bool) -> Int? {
        follows ? nil : 0
    }

    /// A listing's row, from `summaryColumns`. A queued download's error is an earlier
    /// attempt's, unless it waits for room on its disk: a listing shows no error for it.
    static func summary(_ row: TableRow<DownloadColumn>) -> DownloadSummary {
        let status = row.text(.status).flatMap(DownloadStatus.init(rawValue:)) ?? .queued
        let showsError = status != .queued || row.text(.errorCode) == DownloadError.Code.notEnoughDiskSpace.rawValue
        return DownloadSummary(
            id: DownloadID(row.text(.id) ?? ""), url: row.text(.url) ?? "", isFolder: row.text(.destinationKind) == "directory",
            destination: row.text(.destination) ?? "", status: status, bytes: row.int(.bytes), total: row.optionalInt(.total),
            filePath: row.text(.filePath), error: showsError ? row.text(.errorMessage) : nil, owner: Self.owner(row))
    }

    /// `pending()`'s answer from one row of `pendingColumns`: the bytes it still needs, of the
    /// first size known (the resumed response's, the response's, the caller's guess).
    static func pending(_ row: TableRow<DownloadColumn>) -> PendingDownload {
        let destination = row.text(.destination) ?? ""
        let folder = row.text(.destinationKind) == "file" ? destination.parentPath : destination
        let size = row.optionalInt(.resumeTotal) ?? row.optionalInt(.total) ?? row.optionalInt(.expectedSize)
        return (DownloadID(row.text(.id) ?? ""), size.map { max(0, $0 - row.int(.bytes)) }, folder, owner(row))
    }

    /// A listing's owner: one this Monsoon does not know is listed as direct (its row cannot be
    /// run, and so owes no episode nor hook anything).
    private static func owner(_ row: TableRow<DownloadColumn>) -> DownloadOwner {
        row.text(.owner).flatMap(DownloadOwner.init(rawValue:)) ?? .direct
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
    static func read(_ row: TableRow<DownloadColumn>, skippingUnreadable: ((Error) -> Void)?) throws -> DownloadRecord? {
        do {
            return try DownloadRecord(row: row)
        } catch {
            guard let skippingUnreadable else { throw error }
            skippingUnreadable(error)
            return nil
        }
    }

    package var id: DownloadID { request.id }

    /// The enqueue order it was saved with.
    package var savedSequence: Int { sequence }

    /// A listing's copy of the row.
    package var listed: Download { snapshot() }

    /// The URL to write beside the state, only for a download whose URL changed (a renewed
    /// link), in the same transaction: the indexed column is not rewritten by every other save.
    package var changedURL: String? { urlChanged ? request.url.absoluteString : nil }
}
