import MonsoonEngine

/// What a worker does with a download the engine gave up on (after its own retries).
enum JobFailure {
    /// The next attempt would fail the same way: the job ends `failed`.
    case permanent(String)
    /// A later attempt, maybe elsewhere, may succeed: the job waits `seconds`, then runs again
    /// while it has attempts left.
    case transient(String, seconds: Double)

    init(_ error: DownloadError?) {
        guard let error else {
            self = .transient("the download stopped without a reason", seconds: 30)
            return
        }
        switch error.code {
        case .httpStatus:
            let status = error.httpStatus ?? 0
            self = status == 408 || status == 429 || status >= 500 ? .transient(error.message, seconds: 60) : .permanent(error.message)
        case .network, .stalled, .truncated, .retryAfterTooLong:
            self = .transient(error.message, seconds: 60)
        case .notEnoughDiskSpace, .fileSystem, .warcNotWritten:
            // The worker's disk, not the job: another worker may have room.
            self = .transient(error.message, seconds: 120)
        default:
            self = .permanent(error.message)
        }
    }
}
