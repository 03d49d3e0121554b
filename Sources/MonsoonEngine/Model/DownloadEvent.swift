/// What happened to a download.
public enum DownloadEvent: Sendable, Equatable {
    case added(Download)
    /// Coalesced: at most about ten a second per download, and the only kind a
    /// slow consumer may miss (it then sees the newest).
    case progress(id: DownloadID, bytes: Int, total: Int?)
    case statusChanged(Download)
    case removed(DownloadID)
    /// A request of the download ended (it may be retried: `statusChanged` says).
    case attempt(AttemptReport)

    public var downloadID: DownloadID {
        switch self {
        case .added(let download), .statusChanged(let download): return download.id
        case .progress(let id, _, _), .removed(let id): return id
        case .attempt(let report): return report.id
        }
    }
}
