/// A download as a listing shows it, read straight from the store.
public struct DownloadSummary: Sendable, Equatable {
    public var id: DownloadID
    public var url: String
    /// The destination is a folder (the name comes from the response).
    public var isFolder: Bool
    public var destination: String
    public var status: DownloadStatus
    public var bytes: Int
    public var total: Int?
    /// The file, once its name is known.
    public var filePath: String?
    /// The last error's message.
    public var error: String?

    /// From 0 to 1, or nil while the total is unknown.
    public var progress: Double? {
        if status == .completed { return 1 }
        guard let total, total > 0 else { return nil }
        return min(1, Double(bytes) / Double(total))
    }
}
