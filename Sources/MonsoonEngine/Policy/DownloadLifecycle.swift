import FoundationEssentials

/// A download's lifecycle as pure decisions: from where a download is and what happened (an
/// attempt ended, a restart, a command, a placement), what it moves to. The loop gathers the
/// facts from curl and its records, and performs the answer.
///
///     queued ──start──▶ downloading ──place──▶ (placing) ──▶ completed
///       ▲                  │  │  └──restart (≤ 3 in a row)──▶ queued
///       │                  │  └──transient failure──▶ waitingToRetry ──due──▶ queued
///       └──resume/retry────┴─────permanent failure──▶ failed
///                          pause (from queued, downloading, waitingToRetry) ──▶ paused
///       queued, downloading ──no room on the disk──▶ queued, held until there is
///
/// Every status change goes through `status(after:from:)`, asked by the download's state
/// machine (`DownloadRecord.StateMachine`), which also keeps the phase of its transfer and
/// refuses what cannot happen where it is.
enum DownloadLifecycle {
    /// What moves a download from one status to another.
    enum Event: Equatable {
        /// A slot is free and the part is ready: its attempt begins.
        case start
        /// The user pauses it (its part stays).
        case pause
        /// Back in line: resumed or retried by the user, due to retry, restarted from scratch,
        /// released by another process's claim, stopped with the engine or found interrupted
        /// by a killed one, or asked again after its file went.
        case requeue
        /// A transient failure: tried again at its `retryAt`.
        case retryLater
        /// The file is in place (or the counted body done).
        case complete
        /// Found whole on disk at start-up: the last run stopped between the rename and the row.
        case foundComplete
        /// For good, until the user asks again.
        case fail
        /// Not enough room on its disk: queued, but held until there is (its part stays).
        case holdForSpace
    }

    /// The status `event` moves a download in `status` to; nil when the event cannot happen
    /// there (a fault in the driver, which then changes nothing).
    static func status(after event: Event, from status: DownloadStatus) -> DownloadStatus? {
        switch (event, status) {
        case (.start, .queued):
            return .downloading
        case (.pause, .queued), (.pause, .downloading), (.pause, .waitingToRetry):
            return .paused
        case (.requeue, .downloading), (.requeue, .waitingToRetry), (.requeue, .paused), (.requeue, .failed), (.requeue, .completed):
            // Never from queued: a download already in line is not put in it twice.
            return .queued
        case (.retryLater, .queued), (.retryLater, .downloading):
            return .waitingToRetry
        case (.complete, .downloading):
            return .completed
        case (.foundComplete, .queued), (.foundComplete, .paused), (.foundComplete, .waitingToRetry):
            return .completed
        case (.fail, .queued), (.fail, .downloading), (.fail, .waitingToRetry), (.fail, .paused):
            return .failed
        case (.holdForSpace, .queued), (.holdForSpace, .downloading):
            return .queued
        default:
            return nil
        }
    }

    /// How an attempt ended, as facts (no handles, no files).
    struct AttemptEnd: Equatable {
        enum Body: Equatable {
            /// Written into the part file.
            case written
            /// Counted (and hashed), written nowhere.
            case counted
            /// No body was taken (an error status, or cut short).
            case none
        }

        /// Why a callback cut the attempt short (nothing: it was not).
        struct Abort: Equatable {
            /// The bytes were unusable for the part (another version, the wrong offset).
            var restartReason: String?
            /// The attempt was stopped (too large, a web page, no room: for good, unless
            /// `isTransient`, as when the database could not save the row).
            var error: DownloadError?
            var isTransient = false
        }

        /// What curl said of the transfer.
        struct Curl: Equatable {
            var code = 0
            var text = ""
        }

        var body: Body
        var abort = Abort()
        /// The final response's status (0: none).
        var status: Int
        /// Its head ended with its blank line (false: cut off inside it).
        var headComplete = true
        /// curl's result code (0: the transfer completed), and its text.
        var curl = Curl()
        var retryAfter: String?
        var contentRange: String?
        /// The final response's validators, and what was known of the part before the attempt.
        var etag: String?
        var lastModified: String?
        var known: ResumeState?
        /// What the part holds now, and the length the server announced.
        var received = 0
        var expected: Int?
        /// Where this attempt started in the part (0: from scratch).
        var resumedFrom = 0
        /// The most the part ever held before this attempt: only going past it is progress.
        var highWater = 0
        /// The download has a file name (so a part that may be whole).
        var hasFile = true
    }

    enum AttemptOutcome: Equatable {
        /// A counted body is done: the count (and hash) is the result.
        case complete
        /// The part is whole: flush it and rename it into place.
        case place
        /// Asked for the rest of a part that already holds all `total` bytes (a 416): place it as it is.
        case placeWholePart(total: Int)
        /// The server answered part of the range asked for, and said where it ended: keep the part
        /// and ask for the rest at once (no failure, no delay).
        case continueRange
        /// Drop the part and go again at once without Range (`restart` decides how often).
        case restartFresh(reason: String)
        /// Stop for good.
        case fail(DownloadError)
        /// A failure for the retry policy to weigh; `holdHost` holds the host's other downloads too.
        case retry(RetryPolicy.Failure, holdHost: Bool)
        /// No room left on the disk (before the reserve, or none at all): keep the part, queue
        /// it again, and hold it until its disk has room; the other downloads go on.
        case holdForSpace(DownloadError)
    }

    static func outcome(of end: AttemptEnd, stall: Stall, now: Date) -> AttemptOutcome {
        if let reason = end.abort.restartReason { return .restartFresh(reason: reason) }
        if let error = end.abort.error {
            if error.code == .notEnoughDiskSpace { return .holdForSpace(error) }
            guard end.abort.isTransient else { return .fail(error) }
            return .retry(RetryPolicy.Failure(error: error, isTransient: true, retryAfter: nil, madeProgress: false), holdHost: false)
        }
        let madeProgress = end.received > end.highWater
        if end.status >= 400 && end.status != 416 {
            // An error status decides, whatever curl made of the (dropped) error body.
            return .retry(FailureClassifier.httpFailure(status: end.status, retryAfter: end.retryAfter, now: now),
                          holdHost: FailureClassifier.holdsHost(status: end.status))
        }
        if end.curl.code == 0, end.status > 0, !end.headComplete {
            let error = DownloadError(.truncated, "the connection closed in the middle of the response's head")
            return .retry(RetryPolicy.Failure(error: error, isTransient: true, retryAfter: nil, madeProgress: false), holdHost: false)
        }
        if end.curl.code != 0 {
            var failure = FailureClassifier.curlFailure(code: end.curl.code, text: end.curl.text, stall: stall)
            failure.madeProgress = madeProgress
            return .retry(failure, holdHost: false)
        }
        if (200...299).contains(end.status) {
            if let expected = end.expected, end.received != expected {
                if end.status == 206, end.received < expected, end.received > end.resumedFrom,
                   let last = end.contentRange.flatMap(ContentRange.init)?.last, last + 1 == end.received {
                    return .continueRange
                }
                let error = DownloadError(.truncated, "the body ended at \(end.received) of \(expected) bytes")
                return .retry(RetryPolicy.Failure(error: error, isTransient: true, retryAfter: nil, madeProgress: madeProgress), holdHost: false)
            }
            return end.body == .counted ? .complete : .place
        }
        if end.status == 416 {
            // Asked for bytes past the end: done if the part already holds the whole resource, and
            // the 416 says so in agreement with what was known (a server that cut the body short
            // and then calls the cut the end must not certify half a file).
            if end.resumedFrom > 0, end.hasFile, let known = end.known,
               let total = end.contentRange.flatMap(ContentRange.init)?.total,
               known.confirmsWhole(partSize: end.resumedFrom, total: total, etag: end.etag, lastModified: end.lastModified) {
                return .placeWholePart(total: total)
            }
            return .restartFresh(reason: "the server could not serve the rest of the part")
        }
        // A 3xx that was not followed (304, or a Location-less redirect).
        return .retry(FailureClassifier.httpFailure(status: end.status, retryAfter: end.retryAfter, now: now), holdHost: false)
    }

    /// After a restart (the `restarts`-th in a row): queue again at once while `restarts` is at
    /// most `limit`, else give up to the retry policy (a resource that keeps changing).
    static func restart(reason: String, restarts: Int, limit: Int) -> RetryPolicy.Failure? {
        guard restarts > limit else { return nil }
        let error = DownloadError(.restartLimit, limit == 0 ? reason : "gave up restarting: \(reason)")
        return RetryPolicy.Failure(error: error, isTransient: true, retryAfter: nil, madeProgress: false)
    }

    /// What a user asks of one download.
    enum Command: Equatable {
        case pause
        case resume
        /// `fileGone`: for a completed download, whether its file is no longer there.
        case retry(fileGone: Bool)
    }

    enum CommandOutcome: Equatable {
        /// Nothing to do (already so, or not applicable).
        case none
        /// Stop any transfer (the part stays) and pause.
        case pause
        /// Queue again, with fresh retry counters; a retry also lifts its host's hold (the user
        /// asks for it now).
        case queue(liftHostHold: Bool)
        /// Queue again from nothing: the completed file is gone.
        case fetchAgain
    }

    static func command(_ command: Command, status: DownloadStatus, placing: Bool) -> CommandOutcome {
        switch (command, status) {
        case (.pause, .queued), (.pause, .downloading), (.pause, .waitingToRetry):
            // A file being renamed into place lands: pausing it would only lose the rename.
            return placing ? .none : .pause
        case (.resume, .paused), (.resume, .failed):
            return .queue(liftHostHold: false)
        case (.retry, .failed), (.retry, .waitingToRetry), (.retry, .paused):
            return .queue(liftHostHold: true)
        case (.retry(let fileGone), .completed):
            return fileGone && !placing ? .fetchAgain : .none
        default:
            return .none
        }
    }
}
