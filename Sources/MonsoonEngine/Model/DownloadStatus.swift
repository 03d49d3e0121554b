/// Where a download is in its life.
///
/// queued → downloading → completed; downloading → paused (by the user);
/// downloading → waitingToRetry → queued (after the backoff); → failed on a
/// permanent error or when the retries are used up; failed or paused → queued
/// on `retry` or `resume`.
public enum DownloadStatus: String, Sendable, Hashable, CaseIterable {
    case queued
    case downloading
    case paused
    case waitingToRetry
    case completed
    case failed

    /// Whether the download will make progress without the user doing anything.
    public var isActive: Bool {
        switch self {
        case .queued, .downloading, .waitingToRetry: return true
        case .paused, .completed, .failed: return false
        }
    }
}
