import Foundation

/// One download as the engine keeps it.
package struct DownloadRecord: Sendable {
    var request: DownloadRequest
    var sequence: Int
    var host: String
    var status: DownloadStatus = .queued
    var bytes = 0
    var total: Int?
    var lastError: DownloadError?
    var counters = RetryPolicy.Counters()
    var retryAt: Date?
    /// The file the download ends in, once known.
    var filePath: String?
    var resume: ResumeState?
    /// Where the bytes came from, after redirects (set when the body starts).
    var finalURL: String?
    /// The host that answered the last attempt at the end of its redirects (an error status too),
    /// for holds and per-host limits; in memory only (a row read back knows `finalURL`'s).
    var answeredHost: String?
    /// The SHA-256 of a `.discard(checksum: true)` download's body, once complete.
    var checksum: String?
    /// An attempt is running (its `Transfer` is the loop's, in `EngineLoop.running`).
    var isRunning = false
    /// The file is being flushed and renamed into place.
    var placing = false
    /// A removal asked for while placing: whether to delete the finished file.
    var pendingRemoval: Bool?
    /// An `enqueue(replacingExisting:)` that arrived while placing: applied once the rename lands.
    var pendingReplacement: DownloadRequest?
    /// The most bytes the part has held: only going past it counts as progress
    /// (a server that ignores Range and drops at the same byte must not retry forever).
    var highWater = 0
    /// Bytes of the part known to be on disk (flushed), saved with the record: after
    /// a power cut the part is cut back to it, since later bytes may be garbage.
    var checkpoint = 0
    /// A checkpoint above 0 was reset since the row was last saved durably: the reset must be
    /// flushed before a byte of the new part exists (a power cut must never pair new bytes
    /// with the old, higher checkpoint). A download that never had one needs no flush.
    var checkpointResetPending = false

    /// Starts the part over: a new epoch, no checkpoint (a reset of a real one to be flushed).
    mutating func startPartOver(epoch: Int) {
        partEpoch = epoch
        if checkpoint > 0 { checkpointResetPending = true }
        checkpoint = 0
    }
    /// Goes up whenever the part is started over, so a late checkpoint of the old bytes is ignored.
    var partEpoch = 0
    /// Immediate restarts in a row (a changing resource), so they cannot loop forever.
    var restarts = 0
    /// The request's URL was changed (`changeURL`): its saves write the URL too, which the row
    /// otherwise has from its insert alone.
    var urlChanged = false

    var queueKey: QueueIndex.Key { QueueIndex.Key(priority: request.priority, sequence: sequence) }

    /// Moves the status as the lifecycle says `event` does; false (and no change) when the
    /// event cannot happen in this status, which is a fault of the caller.
    @discardableResult
    mutating func apply(_ event: DownloadLifecycle.Event) -> Bool {
        guard let next = DownloadLifecycle.status(after: event, from: status) else {
            assertionFailure("\(event) cannot happen to a download that is \(status)")
            return false
        }
        status = next
        return true
    }

    func snapshot() -> Download {
        Download(request: request, status: status, bytes: bytes, total: total, lastError: lastError,
                 filePath: filePath, attempts: counters.attempts, retryAt: retryAt,
                 finalURL: finalURL, etag: resume?.etag, lastModified: resume?.lastModified, checksum: checksum)
    }
}
