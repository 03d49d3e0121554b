import FoundationEssentials

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
    /// The head's blank line came: libcurl 7.88 ends a transfer whose connection closed inside
    /// the head without an error, as a complete answer with no body.
    var isComplete = false

    static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.status == rhs.status && lhs.contentType == rhs.contentType && lhs.contentLength == rhs.contentLength
            && lhs.contentRange == rhs.contentRange && lhs.etag == rhs.etag && lhs.lastModified == rhs.lastModified
            && lhs.contentDisposition == rhs.contentDisposition && lhs.retryAfter == rhs.retryAfter
    }

    /// Takes one raw header line (with its CRLF). Works on the bytes: only the headers the
    /// engine acts on (or all, when `keepsFields`) become strings.
    mutating func consume(line raw: UnsafeBufferPointer<UInt8>) {
        var end = raw.count
        while end > 0, raw[end - 1] == 0x0D || raw[end - 1] == 0x0A { end -= 1 }
        let line = UnsafeBufferPointer(rebasing: raw[0..<end])
        if end == 0 && status > 0 {
            isComplete = true
            return
        }
        if line.starts(with: "HTTP/".utf8) {
            let keep = keepsFields
            self = ResponseHead()
            keepsFields = keep
            // "HTTP/1.1 200 OK", "HTTP/2 200": the digits after the first space, on the bytes (a
            // split into strings cost more than the rest of the response's head).
            status = 0
            guard var index = line.firstIndex(of: UInt8(ascii: " ")) else { return }
            while index < line.count, line[index] == UInt8(ascii: " ") { index += 1 }
            var value = 0
            var digits = 0
            while index < line.count, line[index] != UInt8(ascii: " ") {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(line[index]), digits < 9 else { return }   // not a status: 0
                value = value * 10 + Int(line[index] - UInt8(ascii: "0"))
                digits += 1
                index += 1
            }
            status = value
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = UnsafeBufferPointer(rebasing: line[..<colon])
        var start = colon + 1
        var stop = line.count
        while start < stop, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
        while stop > start, line[stop - 1] == 0x20 || line[stop - 1] == 0x09 { stop -= 1 }
        let value = { String(decoding: UnsafeBufferPointer(rebasing: line[start..<stop]), as: UTF8.self) }
        if keepsFields { fields.append((String(decoding: name, as: UTF8.self), value())) }
        switch name.count {
        case 4 where Self.equalsIgnoringCase(name, "etag"): etag = value()
        case 11 where Self.equalsIgnoringCase(name, "retry-after"): retryAfter = value()
        case 12 where Self.equalsIgnoringCase(name, "content-type"): contentType = value()
        case 13 where Self.equalsIgnoringCase(name, "content-range"): contentRange = value()
        case 13 where Self.equalsIgnoringCase(name, "last-modified"): lastModified = value()
        case 14 where Self.equalsIgnoringCase(name, "content-length"): contentLength = Int(value())
        case 19 where Self.equalsIgnoringCase(name, "content-disposition"): contentDisposition = value()
        default: break
        }
    }

    /// ASCII case-insensitive equality of a header name with a lowercase name.
    private static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        for index in 0..<bytes.count {
            let byte = bytes[index]
            let folded = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if folded != expected[index] { return false }
        }
        return true
    }

    /// The media type without parameters, lowercased ("text/html").
    var mediaType: String? {
        contentType.map { $0.split(separator: ";", maxSplits: 1)[0].trimmingBlanks().lowercased() }
    }

    var isSuccess: Bool { (200...299).contains(status) }
}

/// A `Content-Range: bytes first-last/total` or `bytes */total` value.
struct ContentRange: Equatable {
    var first: Int?
    var last: Int?
    var total: Int?

    init?(_ text: String) {
        let trimmed = text.trimmingBlanks()
        guard trimmed.lowercased().hasPrefix("bytes") else { return nil }
        let spec = trimmed.dropFirst(5).trimmingBlanks()
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
        let trimmed = value.trimmingBlanks()
        if let seconds = Int(trimmed) { return Double(max(0, seconds)) }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
