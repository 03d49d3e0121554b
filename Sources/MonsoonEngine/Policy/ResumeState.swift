/// What is known of a partly downloaded resource, so a later request can ask
/// for just the rest, and only if the resource has not changed.
struct ResumeState: Equatable, Sendable {
    /// The URL the part was fetched from.
    var url: String
    var etag: String?
    var lastModified: String?
    var total: Int?

    /// The `If-Range` value: a strong ETag, else the Last-Modified date, else nil
    /// (no safe way to resume: a weak ETag must not be used in If-Range).
    var ifRange: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    /// The response answered for a different resource version than this one, or cannot show it
    /// did not: a validator the first answer carried and this one drops proves nothing (a server
    /// that ignored If-Range may be serving another version's bytes).
    func conflicts(with head: ResponseHead, total responseTotal: Int?) -> Bool {
        if let etag, etag != head.etag { return true }
        if let lastModified, lastModified != head.lastModified { return true }
        if let total, let responseTotal, total != responseTotal { return true }
        return false
    }

    /// Whether a 416 to a request for the rest of a part of `partSize` bytes shows that the part
    /// is the whole resource: its `Content-Range` total is the part's size and agrees with the
    /// length already known, and the validators it carries are this version's. Without a known
    /// length, the 416 must carry the validator the request named in `If-Range`.
    func confirmsWhole(partSize: Int, total: Int?, etag otherTag: String?, lastModified otherDate: String?) -> Bool {
        guard let total, total == partSize else { return false }
        if let known = self.total, known != total { return false }
        if let etag, let otherTag, etag != otherTag { return false }
        if let lastModified, let otherDate, lastModified != otherDate { return false }
        if self.total == nil {
            guard let validator = ifRange, validator == otherTag || validator == otherDate else { return false }
        }
        return true
    }
}

/// How the engine starts one attempt.
struct AttemptPlan: Equatable {
    /// Bytes already in the part file to be kept; 0 for a fresh start.
    var offset: Int
    /// Headers to add: `Range` and `If-Range` when resuming.
    var rangeStart: Int? { offset > 0 ? offset : nil }
    var ifRange: String?

    /// Plans an attempt from the bytes in the part file and what is known of them.
    /// A part without a usable validator, or from another URL, is discarded:
    /// a spliced file must be impossible.
    static func plan(partSize: Int, state: ResumeState?, url: String) -> AttemptPlan {
        guard partSize > 0, let state, state.url == url, let validator = state.ifRange else {
            return AttemptPlan(offset: 0, ifRange: nil)
        }
        if let total = state.total, partSize > total { return AttemptPlan(offset: 0, ifRange: nil) }
        return AttemptPlan(offset: partSize, ifRange: validator)
    }
}

/// What to do with a response's body, decided once per attempt when the first
/// body byte arrives (or the response ends without one).
enum BodyDecision: Equatable {
    /// Write the body into the part file from this offset (0: truncate and start over).
    case write(from: Int, total: Int?)
    /// The server sent bytes of a different version or from the wrong offset:
    /// abort, discard the part, and start again at once without Range.
    case restartFresh(String)
    /// Not a 2xx: swallow the (small) error body; the status decides later.
    case discard
    /// The response cannot be what was asked for.
    case fail(DownloadError)

    static func decide(head: ResponseHead, plan: AttemptPlan, state: ResumeState?, expectedMediaType: String?) -> BodyDecision {
        guard head.isSuccess else { return .discard }
        if let expected = expectedMediaType?.lowercased(),
           expected.hasPrefix("audio") || expected.hasPrefix("video"),
           head.mediaType == "text/html" || head.mediaType == "application/xhtml+xml" {
            return .fail(DownloadError(.webPageNotMedia, "the server returned a web page, not media (Content-Type \(head.mediaType ?? "text/html"), status \(head.status))", httpStatus: head.status))
        }
        if head.status == 206 {
            guard let range = head.contentRange.flatMap(ContentRange.init), let first = range.first else {
                return .restartFresh("the server answered 206 without a usable Content-Range")
            }
            if first != plan.offset {
                return .restartFresh("the server sent bytes from \(first), not \(plan.offset)")
            }
            if plan.offset > 0, let state, state.conflicts(with: head, total: range.total) {
                return .restartFresh("the resource changed on the server")
            }
            return .write(from: plan.offset, total: range.total)
        }
        // A 200 to a Range request: the server ignored Range or the resource changed
        // (If-Range did not match). Either way the body is the whole resource.
        return .write(from: 0, total: head.contentLength)
    }
}
