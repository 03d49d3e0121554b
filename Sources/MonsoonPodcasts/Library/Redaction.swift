import Foundation

/// Hides credentials in URLs before they are printed, logged or written as JSON.
public enum Redaction {
    /// Query parameters whose names contain one of these are secrets (token, auth_token,
    /// private_token, key, api_key, token-hash, sig, signature, password, jwt, id_jwt…).
    private static let secretParts = ["token", "key", "auth", "sig", "secret", "pass", "hash", "session", "credential", "jwt"]
    /// Query parameters with one of these as a whole word of their name are secrets too (`tok`,
    /// `x-tok`, `accessTok`). Only as a word: as a part of a name, `tok` is also in `stock`,
    /// `tiktok` and `tokyo`, and a redacted value makes an exported feed URL one that cannot
    /// be imported.
    private static let secretWords: Set<String> = ["tok"]

    /// The URL with its user and password, and secret-looking query values, replaced by
    /// `***`. Text that is not a URL but has a user part (`user:pass@host/feed`) has it masked.
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

    /// Whether a query parameter called `name` holds a secret.
    static func isSecret(name: String) -> Bool {
        let lowered = name.lowercased()
        if secretParts.contains(where: { lowered.contains($0) }) { return true }
        return words(of: name).contains { secretWords.contains($0) }
    }

    /// The words of a parameter name, lowercased: split at anything but letters and digits, and where
    /// a capital follows a small letter (`accessTok` is `access`, `tok`).
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

    /// The URL's text, redacted as `redact(_:)` does a string.
    public static func redact(_ url: URL) -> String { redact(url.absoluteString) }

    /// Whether `text` has a user part or a query, scanned as contiguous bytes: `inspect --json`
    /// and `get` ask this of every URL they print, and the generic `utf8.contains` walk cost more
    /// than writing the URL out.
    private static func mayHoldSecrets(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.contains { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "?") } }
    }

    /// True when `url` carries the marker `redact` writes where credentials were (a user or password
    /// `***`, a query value `***`): it was printed or exported redacted, and fetching it would send
    /// `***` to the server instead of the credentials.
    public static func hasRedactionMarker(_ url: URL) -> Bool {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return false }
        return components.user == marker || components.password == marker || (components.queryItems ?? []).contains { $0.value == marker }
    }

    /// What replaces a secret.
    private static let marker = "***"

    /// Redacts every URL inside a message.
    public static func redactText(_ message: String) -> String {
        guard message.contains("@") || message.contains("?") else { return message }
        return message.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            let text = String(word)
            guard text.contains("://") || text.contains("@") else { return text }
            // Keep punctuation that closed a sentence around the URL.
            let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: ".,;:()'\""))
            guard !trimmed.isEmpty, let range = text.range(of: trimmed) else { return redact(text) }
            return text.replacingCharacters(in: range, with: redact(trimmed))
        }.joined(separator: " ")
    }

    private static func maskUserPart(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        guard start < at else { return text }
        return String(text[..<start]) + "***" + String(text[at...])
    }
}
