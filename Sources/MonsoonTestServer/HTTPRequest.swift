import FoundationEssentials

/// A parsed HTTP/1.x request head.
struct HTTPRequest {
    var method: String
    /// The request target as sent (path plus query).
    var target: String
    var version: String
    /// Header fields with lowercased names; repeated fields joined with ", ".
    var headers: [String: String]

    /// Parses a request head (without the blank line that ends it); `nil` if malformed.
    init?(head: String) {
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        // RFC 9112 §2.2: ignore empty lines before the request line.
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        guard let requestLine = lines.popFirst() else { return nil }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return nil }
        method = String(parts[0])
        target = String(parts[1])
        version = String(parts[2])
        headers = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].lowercased()
            guard !name.isEmpty, !name.contains(" ") else { return nil }
            let value = line[line.index(after: colon)...].trimmingHTTPWhitespace()
            if let existing = headers[name] {
                headers[name] = existing + ", " + value
            } else {
                headers[name] = value
            }
        }
    }

    /// The target without its query string (and without scheme and authority, should a
    /// client send the absolute form): what routes are matched against.
    var path: String {
        var path = target[...]
        if let query = path.firstIndex(of: "?") { path = path[..<query] }
        if path.lowercased().hasPrefix("http://") {
            let authority = path.dropFirst(7)
            path = authority.firstIndex(of: "/").map { authority[$0...] } ?? "/"
        }
        return String(path)
    }

    /// Whether the client allows the connection to stay open after this request.
    var wantsKeepAlive: Bool {
        let tokens = (headers["connection"] ?? "").lowercased().split(separator: ",").map { $0.trimmingHTTPWhitespace() }
        if tokens.contains("close") { return false }
        return version == "HTTP/1.1" || tokens.contains("keep-alive")
    }
}

extension StringProtocol {
    /// Trims spaces and tabs (HTTP's optional whitespace) from both ends.
    func trimmingHTTPWhitespace() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
