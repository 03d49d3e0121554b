import Foundation

/// Hides credentials in URLs before they are printed, logged or written as JSON.
public enum Redaction {
    /// Query parameters whose names contain one of these are secrets (token, auth_token,
    /// private_token, api_key, token-hash, sig, password…).
    private static let secretParts = ["token", "key", "auth", "sig", "secret", "pass", "hash", "session", "credential"]

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
                let name = item.name.lowercased()
                guard item.value != nil, secretParts.contains(where: { name.contains($0) }) else { return item }
                changed = true
                return URLQueryItem(name: item.name, value: marker)
            }
        }
        guard changed else { return text }
        // Fail closed: if the URL cannot be rebuilt, print none of it.
        return components.string ?? "(a URL with credentials)"
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
