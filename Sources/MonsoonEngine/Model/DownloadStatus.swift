/// Where a download is in its life.
///
/// queued → downloading → completed; downloading → paused (by the user);
/// downloading → waitingToRetry → queued (after the backoff); → failed on a
/// permanent error or when the retries are used up; failed or paused → queued
/// on `retry` or `resume`.
///
/// Frozen, unlike the engine's other enums: the set is complete by design. These are the
/// states a download is in as its owner sees it (at rest or transferring); finer phases of an
/// attempt (preparing its part, placing its file) are the engine's own, inside `.downloading`,
/// and a new status would change what every stored queue means. So a `switch` over it may be
/// exhaustive, and the compiler points at each one if that ever changes.
public enum DownloadStatus: String, Sendable, Hashable, CaseIterable {
    /// Waiting to start: for a free slot, overall or on its host, or for its host's hold to end.
    case queued
    /// A transfer is running.
    case downloading
    /// Stopped by the user; the part file is kept for `resume`.
    case paused
    /// A transient failure: the download is queued again at `retryAt`.
    case waitingToRetry
    /// The file is in place (or, for `.discard`, the body was counted).
    case completed
    /// Stopped for good: a permanent error, or the retries are used up; `lastError` says why.
    case failed

    /// Whether the download will make progress without the user doing anything.
    public var isActive: Bool {
        switch self {
        case .queued, .downloading, .waitingToRetry: return true
        case .paused, .completed, .failed: return false
        }
    }
}
