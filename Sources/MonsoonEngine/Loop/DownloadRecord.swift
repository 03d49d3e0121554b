import Foundation

/// One download as the engine keeps it.
package struct DownloadRecord: Sendable {
    var request: DownloadRequest
    var sequence: Int
    var host: String
    /// Its status, transfer phase, pending requests and restarts: changed by events alone.
    private(set) var state = StateMachine()
    var status: DownloadStatus { state.status }
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
    /// The file is being flushed and renamed into place.
    var placing: Bool { state.isPlacing }
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
    /// The request's URL was changed (`changeURL`): its saves write the URL too, which the row
    /// otherwise has from its insert alone.
    var urlChanged = false

    init(request: DownloadRequest, sequence: Int, host: String) {
        self.request = request
        self.sequence = sequence
        self.host = host
    }

    var queueKey: QueueIndex.Key { QueueIndex.Key(priority: request.priority, sequence: sequence) }

    /// Hands `event` to the download's state machine: what it answers is the caller's to
    /// perform, a refusal included (`EngineCore.refused`).
    mutating func handle(_ event: StateMachine.Event) -> StateMachine.Action {
        state.handle(event)
    }

    /// A status as read from a row: no transfer, nothing pending (what was running is
    /// queued again by `inspectingPart`).
    mutating func restoreStatus(_ status: DownloadStatus) {
        state = StateMachine(status: status)
    }

    func snapshot() -> Download {
        Download(request: request, status: status, bytes: bytes, total: total, lastError: lastError,
                 filePath: filePath, attempts: counters.attempts, retryAt: retryAt,
                 finalURL: finalURL, etag: resume?.etag, lastModified: resume?.lastModified, checksum: checksum)
    }
}
