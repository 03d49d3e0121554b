import FoundationEssentials
import Glibc
import MonsoonEngine

/// What a worker does with a download that failed. A worker's engine makes one attempt per claim
/// (no retries or restarts of its own): every new request goes back through the shared queue,
/// which spaces and counts them for each host across all workers.
enum JobFailure: Equatable {
    /// The next attempt would fail the same way: the job ends `failed`.
    case permanent(String)
    /// A later attempt, maybe elsewhere, may succeed: the job waits `seconds`, then runs again
    /// while it has attempts left.
    case transient(String, seconds: Double)

    /// Why it failed, as the job's error says it.
    var reason: String {
        switch self {
        case .permanent(let reason), .transient(let reason, _): reason
        }
    }

    /// The job goes back to the queue, to be tried again.
    var retries: Bool {
        if case .transient = self { true } else { false }
    }

    /// - Parameter attempt: the attempt that failed, from 1: the wait doubles with each (1 s,
    ///   2 s, 4 s … a minute), as the engine's own retries would.
    init(_ error: DownloadError?, attempt: Int) {
        let backoff = min(60, pow(2, Double(max(0, attempt - 1))))
        guard let error else {
            self = .transient("the download stopped without a reason", seconds: backoff)
            return
        }
        switch error.code {
        case .httpStatus:
            let status = error.httpStatus ?? 0
            // A redirect not followed (to a host that spaces its requests): the next claim looks where it leads.
            self = status == 408 || status == 429 || status >= 500 || (300...399).contains(status)
                ? .transient(error.message, seconds: backoff) : .permanent(error.message)
        case .network, .stalled, .truncated, .retryAfterTooLong, .restartLimit:
            self = .transient(error.message, seconds: backoff)
        case .notEnoughDiskSpace, .fileSystem, .warcNotWritten:
            // The worker's disk, not the job: another worker may have room.
            self = .transient(error.message, seconds: 120)
        default:
            self = .permanent(error.message)
        }
    }
}
