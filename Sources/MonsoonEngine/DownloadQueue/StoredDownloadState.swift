import FoundationEssentials
import MonsoonStore

/// A download's state as its queue last saved it, for those who follow the engine from
/// outside (the podcast layer copies it into its episodes): what `QueueStore.states` answers.
package struct StoredDownloadState: Sendable, Equatable {
    package var id: DownloadID
    /// Who answers for it.
    package var owner: DownloadOwner
    package var status: DownloadStatus
    /// The URL the download asks for (a renewed link's once renewed): where its file came from.
    package var url: String?
    /// Bytes downloaded so far (a completed download's size).
    package var bytes: Int
    /// The full length, once a response has told it.
    package var total: Int?
    /// When the next attempt may start, while waiting to retry.
    package var retryAt: Date?
    /// The last error, if any (an earlier attempt's too: see `currentError`).
    package var error: DownloadError?
    /// The file's path, once named.
    package var filePath: String?
    /// Where the bytes came from after redirects, and the validators of the response.
    package var finalURL: String?
    package var etag: String?
    package var lastModified: String?
    /// The folder below which no symbolic link is followed, if the request named one.
    package var root: String?
    /// A completed file's SHA-256, when its attempt hashed it (`Download.checksum`).
    package var checksum: String?
    /// When the row was last written.
    package var updated: Date

    package init(id: DownloadID, owner: DownloadOwner = .direct, status: DownloadStatus, url: String? = nil, bytes: Int = 0, total: Int? = nil, retryAt: Date? = nil,
                 error: DownloadError? = nil, filePath: String? = nil, finalURL: String? = nil,
                 etag: String? = nil, lastModified: String? = nil, root: String? = nil, checksum: String? = nil, updated: Date) {
        self.id = id
        self.owner = owner
        self.status = status
        self.url = url
        self.bytes = bytes
        self.total = total
        self.retryAt = retryAt
        self.error = error
        self.filePath = filePath
        self.finalURL = finalURL
        self.etag = etag
        self.lastModified = lastModified
        self.root = root
        self.checksum = checksum
        self.updated = updated
    }

    /// The error that stands now: a queued download's error is an earlier attempt's, unless
    /// it waits for room on its disk.
    package var currentError: String? {
        status == .queued && error?.code != .notEnoughDiskSpace ? nil : error?.message
    }
}

extension StoredDownloadState {
    /// Reads a row selected with `QueueRows.stateColumns`.
    package init(row: TableRow<DownloadColumn>) throws {
        guard let id = row.text(.id), let status = row.text(.status).flatMap(DownloadStatus.init(rawValue:)) else {
            throw StoreError(code: 0, message: "a download row in the database is incomplete (id \(row.text(.id) ?? "missing"))")
        }
        self.init(
            id: DownloadID(id), owner: try DownloadRecord.owner(row), status: status, url: row.text(.url), bytes: row.int(.bytes), total: row.optionalInt(.total), retryAt: row.date(.retryAt),
            error: row.text(.errorMessage).map { DownloadError(DownloadError.Code(rawValue: row.text(.errorCode) ?? ""), $0) },
            filePath: row.text(.filePath), finalURL: row.text(.finalURL), etag: row.text(.etag), lastModified: row.text(.lastModified),
            root: row.text(.root), checksum: row.text(.checksum), updated: row.date(.updated) ?? .distantPast)
    }
}
