import FoundationEssentials

/// Everything a connection needs to write one response: decided up front from the request,
/// the route and the fault in force, so the HTTP rules live here and the socket code stays dumb.
struct ResponsePlan {
    var status: Int
    /// Headers other than Date, Server and Connection (the connection adds those).
    var headers: [(String, String)] = []
    /// The body to read from, and which part of it is sent.
    var source: BodySource? = nil
    var range: Range<Int> = 0..<0
    /// False for HEAD and for statuses that carry no body.
    var sendsBody = false
    /// Faults: send at most this many body bytes, then stop.
    var limit: Int? = nil
    /// Faults: send at most this many bytes of the head, then cut the connection.
    var headLimit: Int? = nil
    /// Sent verbatim instead of `HTTP/1.1 <status> <reason>` (``Route/statusLine``).
    var statusLine: String? = nil
    /// Faults: after the (limited) body, keep the connection silent this long.
    var stallSeconds: Double = 0
    /// Body bytes per second.
    var throttle: Int? = nil
    /// Close the connection after this response regardless of keep-alive, and say so
    /// (`Connection: close`).
    var closesConnection = false
    /// Faults: close the connection after this response without announcing it, the way a
    /// failing network or server would.
    var cutsConnection = false

    static func make(for request: HTTPRequest, route: Route?, fault: Fault?) -> ResponsePlan {
        let isHead = request.method == "HEAD"
        guard request.method == "GET" || isHead else {
            var plan = page(405, isHead: false)
            plan.headers.append(("Allow", "GET, HEAD"))
            // A body we did not read may follow (e.g. chunked): do not try to parse it as a request.
            plan.closesConnection = request.headers["transfer-encoding"] != nil
            return plan
        }
        guard let route else { return page(404, isHead: isHead) }
        // A signed link is checked before anything else, as a CDN does: expired or forged, it is refused.
        if let signing = route.signing, !signing.accepts(request.target) { return page(403, isHead: isHead) }

        switch fault {
        case .status(let status, _, let retryAfter)?:
            var plan = page(status, isHead: isHead)
            if let retryAfter { plan.headers.append(("Retry-After", retryAfter)) }
            return plan
        case .redirect(let location, let status)?:
            var plan = page(status, isHead: isHead)
            plan.headers.append(("Location", location))
            return plan
        case .unsatisfiable(let total, let etag, _)?:
            var plan = page(416, isHead: isHead)
            plan.headers.append(("Content-Range", "bytes */\(total)"))
            if let etag { plan.headers.append(("ETag", etag)) }
            return plan
        default:
            break
        }

        var plan = normal(for: request, route: route, isHead: isHead)
        plan.statusLine = route.statusLine
        switch fault {
        case .dropAfter(let bytes, _)?:
            plan.limit = max(0, bytes)
            plan.cutsConnection = true
        case .stallAfter(let bytes, let seconds, _)?:
            plan.limit = max(0, bytes)
            plan.stallSeconds = max(0, seconds)
            plan.cutsConnection = true
        case .shortBody(let missing, _)?:
            plan.limit = max(0, plan.range.count - max(0, missing))
            plan.cutsConnection = true
        case .dropInHead(let bytes, _)?:
            plan.headLimit = max(0, bytes)
            plan.cutsConnection = true
        default:
            break
        }
        return plan
    }

    /// The answer from the route itself: full body, a range, 304 or 416.
    private static func normal(for request: HTTPRequest, route: Route, isHead: Bool) -> ResponsePlan {
        guard let (source, size) = BodySource.open(route.body) else { return page(404, isHead: isHead) }
        let lastModified = route.lastModified.map(HTTPDate.format)
        var plan = ResponsePlan(status: route.status, source: source, range: 0..<size, throttle: route.throttle)
        var validators: [(String, String)] = []
        if let etag = route.etag { validators.append(("ETag", etag)) }
        if let lastModified { validators.append(("Last-Modified", lastModified)) }

        func finish(status: Int, range: Range<Int>, extra: [(String, String)] = []) -> ResponsePlan {
            plan.status = status
            plan.range = range
            plan.headers = [("Content-Type", route.contentType)]
            if Self.allowsBody(status) {
                if route.sendsContentLength {
                    plan.headers.append(("Content-Length", String(range.count)))
                } else {
                    plan.closesConnection = true   // the close is what ends the body
                }
            }
            if route.supportsRanges && route.status == 200 { plan.headers.append(("Accept-Ranges", "bytes")) }
            plan.headers += extra + validators
            if let disposition = route.contentDisposition { plan.headers.append(("Content-Disposition", disposition)) }
            plan.headers += route.extraHeaders
            plan.sendsBody = !isHead && Self.allowsBody(status)
            return plan
        }

        // A non-200 route status is a permanent answer: no ranges, no revalidation.
        guard route.status == 200 else { return finish(status: route.status, range: 0..<size) }

        // Conditional GET (RFC 9110 §13.2.2): If-None-Match wins over If-Modified-Since.
        if let ifNoneMatch = request.headers["if-none-match"] {
            if let etag = route.etag, Self.etagList(ifNoneMatch, containsWeakly: etag) {
                return notModified(route: route, validators: validators)
            }
        } else if let since = request.headers["if-modified-since"].flatMap(HTTPDate.parse),
                  let modified = route.lastModified,
                  modified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970 {
            return notModified(route: route, validators: validators)
        }

        guard route.supportsRanges, let rangeHeader = request.headers["range"] else {
            return finish(status: 200, range: 0..<size)
        }
        if !route.ignoresIfRange, let ifRange = request.headers["if-range"] {
            let matches: Bool
            if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
                // If-Range needs the strong comparison: weak tags never match.
                matches = route.etag.map { !$0.hasPrefix("W/") && $0 == ifRange } ?? false
            } else {
                matches = lastModified == ifRange
            }
            if !matches { return finish(status: 200, range: 0..<size) }
        }
        switch parseRange(rangeHeader, size: size) {
        case .ignore:
            return finish(status: 200, range: 0..<size)
        case .range(var range):
            if let most = route.maxRangeLength { range = range.lowerBound..<min(range.upperBound, range.lowerBound + max(1, most)) }
            if route.rangesWithoutValidators { validators = [] }
            return finish(status: 206, range: range,
                          extra: [("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)")])
        case .unsatisfiable:
            var plan = page(416, isHead: isHead)
            plan.headers.append(("Content-Range", "bytes */\(size)"))
            plan.headers += validators
            return plan
        }
    }

    private static func notModified(route: Route, validators: [(String, String)]) -> ResponsePlan {
        var plan = ResponsePlan(status: 304)
        plan.headers = validators + route.extraHeaders
        return plan
    }

    /// A small generated text/html answer such as an error page or a redirect.
    static func page(_ status: Int, isHead: Bool) -> ResponsePlan {
        let title = "\(status) \(reasonPhrase(status))"
        let html = Array("<!DOCTYPE html>\n<html><head><title>\(title)</title></head><body><h1>\(title)</h1></body></html>\n".utf8)
        var plan = ResponsePlan(status: status, source: .bytes(html), range: 0..<html.count)
        plan.headers = [("Content-Type", "text/html; charset=utf-8")]
        if allowsBody(status) {
            plan.headers.append(("Content-Length", String(html.count)))
            plan.sendsBody = !isHead
        }
        return plan
    }

    /// 1xx, 204 and 304 responses never have a body (RFC 9110 §6.4.1).
    static func allowsBody(_ status: Int) -> Bool {
        !(100..<200).contains(status) && status != 204 && status != 304
    }

    enum RangeRequest: Equatable {
        /// No usable single byte range: answer 200 with the whole body.
        case ignore
        case unsatisfiable
        case range(Range<Int>)
    }

    /// Interprets a Range header against a body of `size` bytes. Only one range is supported;
    /// a list of ranges, another unit or a syntax error fall back to the whole body.
    static func parseRange(_ header: String, size: Int) -> RangeRequest {
        let value = header.trimmingHTTPWhitespace()
        guard value.lowercased().hasPrefix("bytes=") else { return .ignore }
        let spec = value.dropFirst(6).trimmingHTTPWhitespace()
        guard !spec.contains(",") else { return .ignore }
        let bounds = spec.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return .ignore }
        let first = bounds[0].trimmingHTTPWhitespace(), last = bounds[1].trimmingHTTPWhitespace()
        if first.isEmpty {
            guard let suffix = Int(last), suffix >= 0 else { return .ignore }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .range((size - min(suffix, size))..<size)
        }
        guard let start = Int(first), start >= 0 else { return .ignore }
        var end = size - 1
        if !last.isEmpty {
            guard let value = Int(last), value >= start else { return .ignore }
            end = min(value, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .range(start..<(end + 1))
    }

    /// Whether an If-None-Match list names `etag` (weak comparison, as RFC 9110 §13.1.2 asks).
    static func etagList(_ list: String, containsWeakly etag: String) -> Bool {
        func opaque(_ tag: String) -> String { tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag }
        let wanted = opaque(etag)
        return list.split(separator: ",").contains { item in
            let tag = item.trimmingHTTPWhitespace()
            return tag == "*" || opaque(tag) == wanted
        }
    }

    static func reasonPhrase(_ status: Int) -> String {
        reasonPhrases[status] ?? "Status \(status)"
    }

    private static let reasonPhrases = [
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content", 206: "Partial Content",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified", 307: "Temporary Redirect",
        308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
        408: "Request Timeout", 410: "Gone", 416: "Range Not Satisfiable", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
    ]
}
