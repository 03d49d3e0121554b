import FoundationEssentials
import Glibc

/// The named fields of one WARC/1.1 record, and their text: the record's head, before its block.
struct WARCRecord {
    var type: String
    /// `<urn:uuid:…>`.
    var id: String
    var date: Date
    var targetURI: String?
    /// Further named fields, in order (WARC-IP-Address, WARC-Concurrent-To, WARC-Truncated, …).
    var fields: [(name: String, value: String)] = []
    var contentType: String
    var contentLength: Int
    var blockDigest: String
    var payloadDigest: String?

    /// A new record id: `<urn:uuid:…>` (WARC 1.1 §5.2).
    static func newID() -> String { "<urn:uuid:\(UUID().uuidString.lowercased())>" }

    /// The record's head: version line, fields, and the blank line before the block (CRLF throughout).
    func head() -> [UInt8] {
        var text = "WARC/1.1\r\n"
        func add(_ name: String, _ value: String) {
            text += name + ": " + Self.oneLine(value) + "\r\n"
        }
        add("WARC-Type", type)
        add("WARC-Record-ID", id)
        add("WARC-Date", Self.format(date))
        if let targetURI { add("WARC-Target-URI", Self.targetURI(targetURI)) }
        for field in fields { add(field.name, field.value) }
        add("WARC-Block-Digest", blockDigest)
        if let payloadDigest { add("WARC-Payload-Digest", payloadDigest) }
        add("Content-Type", contentType)
        add("Content-Length", String(contentLength))
        text += "\r\n"
        return Array(text.utf8)
    }

    /// `value` without control characters: a field is one line, and a line break in a value
    /// (a hostile URL, say) would start another field.
    static func oneLine(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
    }

    /// A URL as WARC-Target-URI has it (WARC 1.1 §5.5, an RFC 3986 URI): without userinfo
    /// (curl sends it as Authorization, kept in the request record as sent), and with spaces,
    /// control characters and non-ASCII bytes percent-encoded.
    static func targetURI(_ url: String) -> String {
        var text = url
        if let scheme = text.firstRange(of: "://") {
            let authorityEnd = text[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
            if let at = text[scheme.upperBound..<authorityEnd].lastIndex(of: "@") {
                text.removeSubrange(scheme.upperBound...at)
            }
        }
        var encoded = ""
        for byte in text.utf8 {
            if byte <= 0x20 || byte >= 0x7F {
                let hex = String(byte, radix: 16, uppercase: true)
                encoded += "%" + (hex.count < 2 ? "0" : "") + hex
            } else {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return encoded
    }

    /// What ends every record, after its block: two CRLFs (WARC 1.1 §4).
    static let trailer: [UInt8] = Array("\r\n\r\n".utf8)

    /// `2026-12-01T23:51:56Z`: UTC, to the second (W3C-ISO8601, as WARC 1.1 §5.4 asks).
    static func format(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}

/// One HTTP exchange as curl saw it: the request's header block as sent, the response's head
/// as received (its header lines with their CRLFs, up to the blank line).
struct WARCExchange: Sendable {
    var url: String
    /// The server's address (CURLINFO_PRIMARY_IP), when known.
    var ip: String?
    /// When the request was sent.
    var date: Date
    var request: [UInt8]
    var response: [UInt8] = []

    /// The response's status, 0 before one came: the three digits after the version, whether a
    /// reason phrase follows or not (`HTTP/1.1 200`, `HTTP/2 200`).
    var status: Int {
        guard let line = response.split(separator: 0x0A, maxSplits: 1).first else { return 0 }
        let pieces = line.split(whereSeparator: { $0 == 0x20 || $0 == 0x0D }).prefix(2)
        guard pieces.count == 2, pieces.last!.count == 3 else { return 0 }
        return Int(String(decoding: pieces.last!, as: UTF8.self)) ?? 0
    }

    /// The value of the response's header `name` (the last of that name), case-insensitively.
    func responseHeader(_ name: String) -> String? {
        var found: String?
        for line in response.split(separator: 0x0A).dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let field = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
            guard field.equalsIgnoringASCIICase(name) else { continue }
            found = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingWhitespace()
        }
        return found
    }

    /// The body came in chunks: recorded again as one chunk, so the head stays as received and
    /// the block is still a valid HTTP message (curl hands over the body without its framing).
    var isChunked: Bool {
        responseHeader("Transfer-Encoding")?.lowercased().contains("chunked") ?? false
    }

    /// Whether the response had a body at all (kept or not).
    var hadBody: Bool {
        let status = self.status
        if (100...199).contains(status) || status == 204 || status == 304 { return false }
        if request.starts(with: "HEAD ".utf8) { return false }
        if let length = responseHeader("Content-Length").flatMap({ Int($0) }) { return length > 0 }
        return true
    }

    /// The response's head is whole: it ends with its blank line.
    var responseIsComplete: Bool { Self.endsHead(response) }

    /// The request's header block is whole (curl may hand it over in pieces).
    var requestIsComplete: Bool { Self.endsHead(request) }

    private static func endsHead(_ bytes: [UInt8]) -> Bool {
        bytes.suffix(4).elementsEqual("\r\n\r\n".utf8) || bytes.suffix(2).elementsEqual("\n\n".utf8)
    }

    /// The request as recorded: as sent, less any `Proxy-Authorization` line (the proxy's
    /// credentials, sent with a plain-HTTP request through a proxy, are no part of the site's exchange).
    var recordedRequest: [UInt8] {
        let name = Array("proxy-authorization:".utf8)
        guard request.count > name.count else { return request }
        var kept: [UInt8] = []
        kept.reserveCapacity(request.count)
        var start = 0
        while start < request.count {
            let end = request[start...].firstIndex(of: 0x0A).map { $0 + 1 } ?? request.count
            let line = request[start..<end]
            let isProxyCredentials = line.count >= name.count && zip(line, name).allSatisfy { $0 | 0x20 == $1 | 0x20 }
            if !isProxyCredentials { kept += line }
            start = end
        }
        return kept
    }

    /// A header block curl sends to a proxy to open a tunnel (`CONNECT host:443 HTTP/1.1`, with
    /// the proxy's credentials): not an exchange with the site, never recorded.
    static func isTunnelRequest(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.starts(with: "CONNECT ".utf8)
    }
}
