import Foundation

/// The parts of a response's head that the engine acts on.
///
/// Filled line by line from curl's header callback; reset at each status line,
/// because with redirects curl reports every response's headers in turn.
struct ResponseHead: Equatable {
    var status = 0
    var contentType: String?
    var contentLength: Int?
    var contentRange: String?
    var etag: String?
    var lastModified: String?
    var contentDisposition: String?
    var retryAfter: String?
    /// Every header of the last response, in order (for fetches).
    var fields: [(name: String, value: String)] = []
    var keepsFields = false

    static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.status == rhs.status && lhs.contentType == rhs.contentType && lhs.contentLength == rhs.contentLength
            && lhs.contentRange == rhs.contentRange && lhs.etag == rhs.etag && lhs.lastModified == rhs.lastModified
            && lhs.contentDisposition == rhs.contentDisposition && lhs.retryAfter == rhs.retryAfter
    }

    /// Takes one raw header line (with its CRLF).
    mutating func consume(line raw: UnsafeBufferPointer<UInt8>) {
        var line = Substring(decoding: raw, as: UTF8.self)
        while let last = line.last, last.isNewline { line.removeLast() }   // "\r\n" is one Character
        if line.hasPrefix("HTTP/") {
            let keep = keepsFields
            self = ResponseHead()
            keepsFields = keep
            let pieces = line.split(separator: " ", maxSplits: 2)
            status = pieces.count > 1 ? Int(pieces[1]) ?? 0 : 0
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        if keepsFields { fields.append((String(line[..<colon]), value)) }
        switch name {
        case "content-type": contentType = value
        case "content-length": contentLength = Int(value)
        case "content-range": contentRange = value
        case "etag": etag = value
        case "last-modified": lastModified = value
        case "content-disposition": contentDisposition = value
        case "retry-after": retryAfter = value
        default: break
        }
    }

    /// The media type without parameters, lowercased ("text/html").
    var mediaType: String? {
        contentType.map { $0.split(separator: ";", maxSplits: 1)[0].trimmingCharacters(in: .whitespaces).lowercased() }
    }

    var isSuccess: Bool { (200...299).contains(status) }
}

/// A `Content-Range: bytes first-last/total` or `bytes */total` value.
struct ContentRange: Equatable {
    var first: Int?
    var last: Int?
    var total: Int?

    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes") else { return nil }
        let spec = trimmed.dropFirst(5).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", maxSplits: 1)
        guard halves.count == 2 else { return nil }
        total = halves[1] == "*" ? nil : Int(halves[1])
        if halves[0] == "*" { return }
        let bounds = halves[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int(bounds[0]), let last = Int(bounds[1]), first <= last else { return nil }
        self.first = first
        self.last = last
        if let total, last >= total { return nil }
    }
}

/// `Retry-After`: delay seconds or an HTTP date.
enum RetryAfter {
    static func seconds(_ value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) { return Double(max(0, seconds)) }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
