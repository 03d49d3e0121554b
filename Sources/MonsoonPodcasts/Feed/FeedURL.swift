import FoundationEssentials

/// URLs written in feeds: trimmed, resolved against the `xml:base` in force and the document's URL.
enum FeedURL {
    /// Nil when `text` is empty or cannot be a URL; characters URLs do not allow (spaces, non-ASCII) are percent-encoded.
    static func resolve(_ text: String, against base: URL?) -> URL? {
        guard let text = FeedText.trimmed(text) else { return nil }
        if hasScheme(text) {
            return URL(string: text)
        }
        guard let base else { return nil }
        return URL(string: text, relativeTo: base)?.absoluteURL
    }

    /// Letters, digits, `+-.`, then a colon before any `/?#`.
    static func hasScheme(_ text: String) -> Bool {
        var first = true
        for byte in text.utf8 {
            if byte == UInt8(ascii: ":") { return !first }
            let allowed = ByteScanner.isLetter(byte) || (!first && (ByteScanner.isDigit(byte) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")))
            if !allowed { return false }
            first = false
        }
        return false
    }
}
