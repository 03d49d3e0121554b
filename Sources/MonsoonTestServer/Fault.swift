/// Misbehaviour a ``Route`` injects into its answers.
///
/// Each route keeps its faults with a remaining count per fault. For every GET or HEAD
/// request the first fault whose count is still above zero applies and its count is
/// decremented (`redirect` never runs out). So
/// `[.status(503, times: 2), .dropAfter(bytes: 1000, times: 1)]` gives 503, 503, a dropped
/// connection, then normal answers. ``TestServer/setRoute(_:_:)`` resets the counts.
public enum Fault: Sendable {
    /// For the next `times` requests: answer `status` with a small text/html body, and
    /// Retry-After if given (seconds like `"2"` or an HTTP date, sent verbatim).
    case status(Int, times: Int, retryAfter: String? = nil)
    /// For the next `times` requests: send the headers and `bytes` body bytes (of the range
    /// being served), then close the connection.
    case dropAfter(bytes: Int, times: Int)
    /// For the next `times` requests: send `bytes` body bytes, then send nothing for
    /// `seconds` while keeping the connection open, then close it.
    case stallAfter(bytes: Int, seconds: Double, times: Int)
    /// For the next `times` requests: send the headers with the full Content-Length but
    /// leave out the last `missing` body bytes, then close the connection.
    case shortBody(missing: Int, times: Int)
    /// For the next `times` requests: send the first `bytes` bytes of the response's head, then
    /// close the connection (a head cut off mid-way).
    case dropInHead(bytes: Int, times: Int)
    /// For the next `times` requests: answer 416 with `Content-Range: bytes */total`
    /// and, if given, `etag` (a lying server that calls where it cut a body the end).
    case unsatisfiable(total: Int, etag: String?, times: Int)
    /// Every request: redirect with `status` (301/302/303/307/308) to `to`, sent verbatim as
    /// Location (any string, e.g. `"file:///etc/passwd"` or `"/other"`).
    case redirect(to: String, status: Int = 302)

    /// How many requests the fault applies to; `Int.max` for the inexhaustible `redirect`.
    var times: Int {
        switch self {
        case .status(_, let times, _), .dropAfter(_, let times), .stallAfter(_, _, let times), .shortBody(_, let times),
             .unsatisfiable(_, _, let times), .dropInHead(_, let times):
            return max(0, times)
        case .redirect:
            return Int.max
        }
    }
}
