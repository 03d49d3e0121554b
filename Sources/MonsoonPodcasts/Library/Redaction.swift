import FoundationEssentials

/// Hides credentials in URLs before they are printed, logged or written as JSON.
public enum Redaction {
    /// Query parameters whose names contain one of these are secrets (auth_token, api_key, signature, id_jwt…).
    private static let secretParts = ["token", "key", "auth", "sig", "secret", "pass", "hash", "session", "credential", "jwt"]
    /// Secrets as a whole word of the name (`x-tok`, `accessTok`) only: `tok` is also in `stock`, `tiktok` and `tokyo`,
    /// and a redacted value makes an exported feed URL one that cannot be imported.
    private static let secretWords: Set<String> = ["tok"]

    /// The URL with its user and password, and secret-looking query values, replaced by `***`. Text that is not a URL
    /// but has a user part (`user:pass@host/feed`) has it masked.
    public static func redact(_ text: String) -> String {
        // Without a user part or a query there is nothing to hide: skip the parse.
        if !mayHoldSecrets(text) { return text }
        guard var components = URLComponents(string: text), components.host != nil else { return maskUserPart(text) }
        var changed = false
        if components.user != nil || components.password != nil {
            components.user = components.user.map { _ in marker }
            components.password = components.password.map { _ in marker }
            changed = true
        }
        if let items = components.queryItems {
            components.queryItems = items.map { item in
                guard item.value != nil, isSecret(name: item.name) else { return item }
                changed = true
                return URLQueryItem(name: item.name, value: marker)
            }
        }
        guard changed else { return text }
        // Fail closed: if the URL cannot be rebuilt, print none of it.
        return components.string ?? "(a URL with credentials)"
    }

    static func isSecret(name: String) -> Bool {
        let lowered = name.lowercased()
        if secretParts.contains(where: { lowered.contains($0) }) { return true }
        return words(of: name).contains { secretWords.contains($0) }
    }

    /// Lowercased, split at anything but letters and digits, and where a capital follows a small letter (`accessTok`).
    static func words(of name: String) -> [String] {
        var words: [String] = []
        var word = ""
        var previousIsLower = false
        for character in name {
            if !(character.isLetter || character.isNumber) {
                if !word.isEmpty { words.append(word) }
                word = ""
                previousIsLower = false
                continue
            }
            if character.isUppercase && previousIsLower {
                words.append(word)
                word = ""
            }
            word += character.lowercased()
            previousIsLower = character.isLowercase
        }
        if !word.isEmpty { words.append(word) }
        return words
    }

    public static func redact(_ url: URL) -> String { redact(url.absoluteString) }

    /// A user part or a query, scanned as contiguous bytes: `inspect --json` asks this of every URL it prints, and the
    /// generic `utf8.contains` walk cost more than writing the URL out.
    private static func mayHoldSecrets(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.contains { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "?") } }
    }

    /// The URL was printed or exported redacted: fetching it would send `***` instead of the credentials.
    public static func hasRedactionMarker(_ url: URL) -> Bool {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return false }
        return components.user == marker || components.password == marker || (components.queryItems ?? []).contains { $0.value == marker }
    }

    private static let marker = "***"

    /// Every URL inside a message.
    public static func redactText(_ message: String) -> String {
        guard message.contains("@") || message.contains("?") else { return message }
        return message.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            let text = String(word)
            guard text.contains("://") || text.contains("@") else { return text }
            // Keep punctuation that closed a sentence around the URL.
            let trimmed = text.trimming { ".,;:()'\"".unicodeScalars.contains($0) }
            guard !trimmed.isEmpty, let range = text.firstRange(of: trimmed) else { return redact(text) }
            return text[..<range.lowerBound] + redact(trimmed) + text[range.upperBound...]
        }.joined(separator: " ")
    }

    private static func maskUserPart(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.firstRange(of: "://")?.upperBound ?? text.startIndex
        guard start < at else { return text }
        return String(text[..<start]) + "***" + String(text[at...])
    }
}
