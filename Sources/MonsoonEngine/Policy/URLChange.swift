import FoundationEssentials

/// What giving a download a new URL for the same resource does, by where the download is
/// (`DownloadManager.changeURL(_:to:)`). Pure: the loop performs the answer.
///
/// The part and what is known of it (validators, length) are kept in every case: they are the
/// resource's, whichever URL serves it. The next attempt asks the new URL for the rest with
/// Range and If-Range, and the answer decides, as for any resume: a 206 whose validators
/// match is appended, a 200 or another version starts the part over.
enum URLChange {
    enum Outcome: Equatable {
        /// Only the URL changes: the download goes on as it is (queued or waiting to retry: its
        /// next attempt uses the new URL; paused: when resumed; complete, or being placed: a
        /// later fetch again does).
        case keepStatus
        /// Queue it again now, with fresh retry counters: it failed on the old URL, and the new
        /// one deserves its own attempts.
        case queueAgain
        /// Stop the running attempt (its part stays) and queue it again: what it is fetching
        /// is the old URL's.
        case stopAndQueueAgain
    }

    static func outcome(status: DownloadStatus, placing: Bool) -> Outcome {
        if placing { return .keepStatus }   // the file lands whole: nothing is left to ask for
        switch status {
        case .failed: return .queueAgain
        case .downloading: return .stopAndQueueAgain
        case .queued, .waitingToRetry, .paused, .completed: return .keepStatus
        }
    }

    /// Whether the old URL's final URL (after redirects) and the host that answered it are
    /// forgotten: yes, unless the download is complete (or being placed), when they say where
    /// its file came from.
    static func forgetsWhereItWasAnswered(status: DownloadStatus, placing: Bool) -> Bool {
        status != .completed && !placing
    }

    /// `record` once its URL is `url`: its hosts, and its part's resume state, are the new URL's.
    static func apply(_ url: URL, to record: inout DownloadRecord) {
        let old = record.request.url.absoluteString
        record.request.url = url
        record.host = HostKey.of(url)
        record.urlChanged = true
        record.resume = resumeState(record.resume, from: old, to: url.absoluteString)
        if forgetsWhereItWasAnswered(status: record.status, placing: record.placing) {
            // Where the old URL's redirects ended says nothing of the new one's (its hosts' limits and
            // holds); the next response says where the bytes come from.
            record.answeredHost = nil
            record.finalURL = nil
        }
    }

    /// The part's resume state once the URL changed: the same bytes and validators, now of
    /// `new` (so the next attempt's plan keeps the part). A state of another URL, already
    /// unusable for this download, stays as it is and is dropped as usual.
    static func resumeState(_ state: ResumeState?, from old: String, to new: String) -> ResumeState? {
        guard var state, state.url == old else { return state }
        state.url = new
        return state
    }
}
