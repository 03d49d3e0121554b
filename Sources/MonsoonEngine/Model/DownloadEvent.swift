/// What happened to a download.
public enum DownloadEvent: Sendable, Equatable {
    /// A download joined the queue: enqueued here, or added to the store by another process.
    case added(Download)
    /// Coalesced: at most about ten a second per download, and the only kind a
    /// slow consumer may miss (it then sees the newest).
    case progress(id: DownloadID, bytes: Int, total: Int?)
    /// A download moved to another status; the snapshot is taken after the change.
    case statusChanged(Download)
    /// A download was removed from the queue.
    case removed(DownloadID)
    /// A request of the download ended (it may be retried: `statusChanged` says).
    case attempt(AttemptReport)

    /// The download the event is about.
    public var downloadID: DownloadID {
        switch self {
        case .added(let download), .statusChanged(let download): return download.id
        case .progress(let id, _, _), .removed(let id): return id
        case .attempt(let report): return report.id
        }
    }
}
