import CCurl
import Foundation

/// What this attempt comes to when it ends: the facts the lifecycle decides on, the report of it,
/// and its part let go.
extension Transfer {
    /// How this attempt ended, as facts (`DownloadLifecycle.outcome` decides what follows).
    /// - Parameters: what the download's record knew before it: the most its part ever held,
    ///   whether it has a file name, and its validators.
    func end(code: CURLcode, highWater: Int, hasFile: Bool, known: ResumeState?) -> DownloadLifecycle.AttemptEnd {
        let abort = state.phase.abort
        var end = DownloadLifecycle.AttemptEnd(
            body: state.body, abort: .init(restartReason: abort?.restartReason, error: abort?.error, isTransient: abort?.isTransient ?? false),
            status: head.status, curl: .init(code: Int(code.rawValue), text: code == CURLE_OK ? "" : errorText(code)),
            retryAfter: head.retryAfter, contentRange: head.contentRange, received: progress.fileSize, expected: progress.total,
            resumedFrom: plan.offset, highWater: highWater, hasFile: hasFile)
        end.etag = head.etag
        end.headComplete = head.isComplete
        end.lastModified = head.lastModified
        end.known = known
        return end
    }

    /// The run report's line for this attempt of download `id` (`error`: the download's, when it
    /// did not end complete).
    func report(_ id: DownloadID, host: String, error: DownloadError?) -> AttemptReport {
        let firstByte = easy.offset(CURLINFO_STARTTRANSFER_TIME_T)
        return AttemptReport(
            id: id, host: host, status: head.status, bytes: state.body == .none ? 0 : progress.thisAttempt, resumedFrom: plan.offset,
            timeToFirstByte: head.status > 0 && firstByte > 0 ? Double(firstByte) / 1_000_000 : nil,
            duration: Double(easy.offset(CURLINFO_TOTAL_TIME_T)) / 1_000_000,
            newConnections: easy.long(CURLINFO_NUM_CONNECTS), error: error)
    }

    /// Lets go of the part (closed on the placer's queue) and of a whole body held in memory that
    /// is not to be kept (none is, after a part was written).
    func closePart(on placer: Placer) {
        discardEarly()
        if part.fd >= 0 {
            placer.closePart(part.fd)
            part.fd = -1
        }
    }
}
