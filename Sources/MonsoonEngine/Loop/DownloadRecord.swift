import FoundationEssentials

/// One download as the engine keeps it.
package struct DownloadRecord: Sendable {
    /// The fields, shared by copies of the record until one of them changes (copy on write).
    /// A download's record is copied a few dozen times in its life (looked at, handed to the
    /// disk worker, made into events), and a copy of the fields themselves retains some twenty
    /// strings and releases them again; a copy of the record retains one box.
    private var box: Box

    /// What a record holds.
    struct Fields: Sendable {
        var request: DownloadRequest
        var sequence: Int
        var host: String
        /// Its status, transfer phase, pending requests and restarts: changed by events alone.
        fileprivate(set) var state = StateMachine()
        var bytes = 0
        var total: Int?
        var lastError: DownloadError?
        var counters = RetryPolicy.Counters()
        var retryAt: Date?
        /// The file the download ends in, once known.
        var filePath: String?
        var resume: ResumeState?
        /// Who answered, at the end of the redirects.
        var origin = Origin()
        /// The SHA-256 of the body, once complete (see `Download.checksum`).
        var checksum: String?
        /// What is known of the part file's bytes.
        var part = Part()
        /// The request's URL was changed (`changeURL`): its saves write the URL too, which the row
        /// otherwise has from its insert alone.
        var urlChanged = false
    }

    /// Who answered the download's last attempt.
    struct Origin: Sendable {
        /// Where the bytes came from, after redirects (set when the body starts).
        var finalURL: String?
        /// The host that answered the last attempt at the end of its redirects (an error status too),
        /// for holds and per-host limits; in memory only (a row read back knows `finalURL`'s).
        var answeredHost: String?
    }

    /// What is known of the part file's bytes: how far it got, and how much of it is surely on disk.
    struct Part: Sendable {
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
        /// Goes up whenever the part is started over, so a late checkpoint of the old bytes is ignored.
        var epoch = 0
    }

    // @unchecked: a box is changed only through the one record that holds it (`fields` copies
    // it first otherwise), so a box another thread can see never changes.
    private final class Box: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    /// The fields to change, copied first when another record shares them.
    private var fields: Fields {
        get { box.fields }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
            yield &box.fields
        }
    }

    init(request: DownloadRequest, sequence: Int, host: String) {
        box = Box(Fields(request: request, sequence: sequence, host: host))
    }

    var request: DownloadRequest { get { box.fields.request } _modify { yield &fields.request } }
    var sequence: Int { get { box.fields.sequence } _modify { yield &fields.sequence } }
    var host: String { get { box.fields.host } _modify { yield &fields.host } }
    var state: StateMachine { box.fields.state }
    var status: DownloadStatus { box.fields.state.status }
    var bytes: Int { get { box.fields.bytes } _modify { yield &fields.bytes } }
    var total: Int? { get { box.fields.total } _modify { yield &fields.total } }
    var lastError: DownloadError? { get { box.fields.lastError } _modify { yield &fields.lastError } }
    var counters: RetryPolicy.Counters { get { box.fields.counters } _modify { yield &fields.counters } }
    var retryAt: Date? { get { box.fields.retryAt } _modify { yield &fields.retryAt } }
    var filePath: String? { get { box.fields.filePath } _modify { yield &fields.filePath } }
    var resume: ResumeState? { get { box.fields.resume } _modify { yield &fields.resume } }
    var finalURL: String? { get { box.fields.origin.finalURL } _modify { yield &fields.origin.finalURL } }
    var answeredHost: String? { get { box.fields.origin.answeredHost } _modify { yield &fields.origin.answeredHost } }
    var checksum: String? { get { box.fields.checksum } _modify { yield &fields.checksum } }
    /// The file is being flushed and renamed into place.
    var placing: Bool { box.fields.state.isPlacing }
    var highWater: Int { get { box.fields.part.highWater } _modify { yield &fields.part.highWater } }
    var checkpoint: Int { get { box.fields.part.checkpoint } _modify { yield &fields.part.checkpoint } }
    var checkpointResetPending: Bool { get { box.fields.part.checkpointResetPending } _modify { yield &fields.part.checkpointResetPending } }
    var partEpoch: Int { get { box.fields.part.epoch } _modify { yield &fields.part.epoch } }
    var urlChanged: Bool { get { box.fields.urlChanged } _modify { yield &fields.urlChanged } }

    /// Starts the part over: a new epoch, no checkpoint (a reset of a real one to be flushed).
    mutating func startPartOver(epoch: Int) {
        partEpoch = epoch
        if checkpoint > 0 { checkpointResetPending = true }
        checkpoint = 0
    }

    var queueKey: QueueIndex.Key { QueueIndex.Key(priority: request.priority, sequence: sequence) }
    /// The host that answered its last attempt (a row read back knows only `finalURL`).
    var answeredHostKey: String? { answeredHost ?? finalURL.flatMap(HostKey.of(text:)) }

    /// Hands `event` to the download's state machine: what it answers is the caller's to
    /// perform, a refusal included (`EngineCore.refused`).
    mutating func handle(_ event: StateMachine.Event) -> StateMachine.Action {
        fields.state.handle(event)
    }

    /// A status as read from a row: no transfer, nothing pending (what was running is
    /// queued again by `inspectingPart`).
    mutating func restoreStatus(_ status: DownloadStatus) {
        fields.state = StateMachine(status: status)
    }

    func snapshot() -> Download {
        let now = box.fields
        return Download(request: now.request, status: now.state.status, bytes: now.bytes, total: now.total,
                        lastError: now.lastError, filePath: now.filePath, attempts: now.counters.attempts,
                        retryAt: now.retryAt, finalURL: now.origin.finalURL, etag: now.resume?.etag,
                        lastModified: now.resume?.lastModified, checksum: now.checksum)
    }
}
