import FoundationEssentials

/// A snapshot of one download.
public struct Download: Sendable, Equatable {
    /// What was asked for: the URL, the destination, the priority and the caller's extras.
    public var request: DownloadRequest
    public var status: DownloadStatus
    /// Body bytes on disk (in the `.part` file, or the finished file).
    public var bytes: Int
    /// The full length, once a response has told it.
    public var total: Int?
    /// The error that failed the download, or that the pending retry follows.
    public var lastError: DownloadError?
    /// The file the download ends up in, once known (always known for `.file` destinations).
    public var filePath: String?
    /// Failed attempts counted against the retry limit.
    public var attempts: Int
    /// When the next attempt may start, while `waitingToRetry`.
    public var retryAt: Date?
    /// The URL the bytes came from, after redirects, once a body started.
    public var finalURL: String?
    /// The validators of the bytes on disk (or being written), as the server sent them.
    public var etag: String?
    /// The `Last-Modified` validator, as the server sent it; nil when it sent none.
    public var lastModified: String?
    /// The hex SHA-256 of the body once complete: a `.discard(checksum: true)` download's, and a
    /// file's whose owner has it hashed as it comes (`DownloadOwner.hashesBody`) when its last
    /// attempt wrote it whole.
    public var checksum: String?

    public var id: DownloadID { request.id }

    /// From 0 to 1, or nil while the total is unknown.
    public var progress: Double? {
        if status == .completed { return 1 }
        guard let total, total > 0 else { return nil }
        return min(1, Double(bytes) / Double(total))
    }
}
