/// A download as a listing shows it, read straight from the store.
public struct DownloadSummary: Sendable, Equatable {
    public var id: DownloadID
    /// The URL as it was enqueued.
    public var url: String
    /// The destination is a folder (the name comes from the response).
    public var isFolder: Bool
    /// The file path for a file destination; otherwise the folder the file goes into.
    public var destination: String
    public var status: DownloadStatus
    /// Body bytes on disk, as last saved.
    public var bytes: Int
    /// The full length in bytes, once a response has told it.
    public var total: Int?
    /// The file, once its name is known.
    public var filePath: String?
    /// The last error's message.
    public var error: String?
    /// Who answers for it.
    public var owner: DownloadOwner

    /// From 0 to 1, or nil while the total is unknown.
    public var progress: Double? {
        if status == .completed { return 1 }
        guard let total, total > 0 else { return nil }
        return min(1, Double(bytes) / Double(total))
    }
}

/// A download that will run, as `pending()` lists it: the bytes it still needs (nil while
/// unknown), its folder, and who answers for it.
public typealias PendingDownload = (id: DownloadID, remaining: Int?, folder: String, owner: DownloadOwner)
