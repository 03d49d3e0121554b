import FoundationEssentials

/// A host as the queue counts it (`host[:port]`, lowercase): the key of per-host limits and holds.
enum HostKey {
    static func of(_ url: URL) -> String {
        let host = url.host?.lowercased() ?? ""
        if let port = url.port { return "\(host):\(port)" }
        return host
    }

    /// `of(_:)` for a URL as text, on its bytes (no URL parse), without a user part; nil when it has
    /// no `scheme://`.
    static func of(text: String) -> String? {
        // On the bytes: this runs for every response, on the transfer thread.
        var text = text
        return text.withUTF8 { bytes -> String? in
            var index = 0
            while index + 2 < bytes.count, !(bytes[index] == 0x3A && bytes[index + 1] == 0x2F && bytes[index + 2] == 0x2F) { index += 1 }
            guard index + 2 < bytes.count else { return nil }
            var start = index + 3
            var end = start
            while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 {   // / ? #
                if bytes[end] == 0x40 { start = end + 1 }   // the last @ ends a user part
                end += 1
            }
            // The default port is not part of the key, as `of(_:)` leaves it out when absent.
            let authority = UnsafeBufferPointer(rebasing: bytes[start..<end])
            if !authority.contains(where: { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 }) { return String(decoding: authority, as: UTF8.self) }
            return String(decoding: authority, as: UTF8.self).lowercased()
        }
    }
}
