import Foundation

/// Hides credentials in URLs before they are printed, logged or written as JSON.
public enum Redaction {
    private static let secretParameters: Set<String> = ["token", "access_token", "auth", "key", "api_key", "apikey", "password", "secret", "signature", "sig"]

    /// The URL with its user and password, and secret-looking query values, replaced by `***`.
    public static func redact(_ text: String) -> String {
        // Without a user part or a query there is nothing to hide: skip the parse.
        if !text.utf8.contains(UInt8(ascii: "@")) && !text.utf8.contains(UInt8(ascii: "?")) { return text }
        guard var components = URLComponents(string: text) else { return text }
        var changed = false
        if components.user != nil || components.password != nil {
            components.user = components.user.map { _ in "***" }
            components.password = components.password.map { _ in "***" }
            changed = true
        }
        if let items = components.queryItems {
            components.queryItems = items.map { item in
                guard secretParameters.contains(item.name.lowercased()), item.value != nil else { return item }
                changed = true
                return URLQueryItem(name: item.name, value: "***")
            }
        }
        return changed ? (components.string ?? text) : text
    }

    public static func redact(_ url: URL) -> String { redact(url.absoluteString) }
}
