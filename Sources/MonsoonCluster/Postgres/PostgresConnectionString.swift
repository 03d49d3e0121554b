import FoundationEssentials

/// A connection string as libpq reads it (a `postgresql://` URL, `key=value` pairs, a bare
/// database name, or empty for libpq's `PG*` variables and defaults), and how it may be shown:
/// with every password replaced by `***`.
///
/// Printing it, interpolating it or dumping it shows the redacted form only. libpq's own error
/// messages may quote the string, or a token of it, as written: ``scrub(_:)`` takes the secrets
/// found here out of such a message.
public struct PostgresConnectionString: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The string as given, password included: for libpq only.
    let text: String
    /// The string with its passwords replaced by `***`: `postgresql://user:***@host/db`, `password=***`.
    public let redacted: String
    /// The passwords, as written and decoded, longest first: what `scrub` removes from messages.
    package let secrets: [String]

    /// Reads where the secrets of `text` are; nothing is checked here (libpq does that).
    public init(_ text: String) {
        self.text = text
        // A URL of another scheme (http://) is refused, but its user part is masked all the same.
        let (redacted, secrets) = Self.scheme(of: text) != nil ? Self.redactURL(text) : Self.redactPairs(text)
        self.redacted = redacted
        self.secrets = Set(secrets.filter { !$0.isEmpty }).sorted { $0.count > $1.count }
    }

    public var description: String { redacted }

    /// A dump shows the redacted string only.
    public var customMirror: Mirror { Mirror(self, children: ["redacted": redacted]) }

    /// `message` (libpq's) with the string replaced by its redacted form and every password by `***`.
    public func scrub(_ message: String) -> String {
        var message = text.isEmpty ? message : message.replacing(text, with: redacted)
        for secret in secrets { message = message.replacing(secret, with: "***") }
        return message
    }

    /// A URL as libpq reads one: `postgresql://` or `postgres://`.
    static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }

    /// The scheme of a string written as a URL (`http` of `http://host/x`), whatever it is; nil
    /// for pairs and bare names.
    static func scheme(of text: String) -> Substring? {
        guard let end = text.firstRange(of: "://")?.lowerBound, end > text.startIndex else { return nil }
        let scheme = text[..<end]
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) } ? scheme : nil
    }

    /// What is wrong with the string before libpq reads it, or nil: a URL of a scheme libpq does
    /// not take would be read as a database's name, and fail later as a server that cannot be reached.
    var problem: String? {
        guard let scheme = Self.scheme(of: text), !Self.isURL(text) else { return nil }
        return "\(scheme):// is not PostgreSQL's scheme"
    }

    /// Whether a parameter called `name` holds a secret: `password`, `sslpassword`, and any other
    /// name with "pass" in it (libpq refuses unknown ones, but a typo's value is still a secret).
    static func isSecret(_ name: String) -> Bool {
        name.lowercased().contains("pass")
    }

    /// A URL with the password of its user part and the values of secret query parameters masked.
    static func redactURL(_ text: String) -> (String, [String]) {
        guard let schemeEnd = text.firstRange(of: "://")?.upperBound else { return (text, []) }
        var secrets: [String] = []
        let queryStart = text[schemeEnd...].firstIndex(of: "?") ?? text.endIndex
        var head = String(text[..<schemeEnd])
        // The user part ends at the last "@" before the query, not the first, as libpq reads it:
        // a password with an unencoded "@" or "/" is then masked whole, whatever libpq makes of it.
        if let at = text[schemeEnd..<queryStart].lastIndex(of: "@"), let colon = text[schemeEnd..<at].firstIndex(of: ":") {
            let password = String(text[text.index(after: colon)..<at])
            secrets += [password, password.percentDecoded ?? password]
            head += text[schemeEnd...colon] + (password.isEmpty ? "" : "***") + text[at..<queryStart]
        } else {
            head += text[schemeEnd..<queryStart]
        }
        guard queryStart < text.endIndex else { return (head, secrets) }
        let parameters = text[text.index(after: queryStart)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter -> String in
            guard let equals = parameter.firstIndex(of: "="), isSecret(String(parameter[..<equals]).percentDecoded ?? String(parameter[..<equals])) else {
                return String(parameter)
            }
            let value = String(parameter[parameter.index(after: equals)...])
            secrets += [value, value.percentDecoded ?? value]
            return parameter[...equals] + "***"
        }
        return (head + "?" + parameters.joined(separator: "&"), secrets)
    }

    /// `key=value` pairs, read with libpq's rules (spaces around `=`, values in single quotes,
    /// backslash escapes), with the values of secret keys masked. From a point where libpq would
    /// refuse the string, every word is taken as a secret: it may be the rest of a password
    /// written with an unquoted space, which libpq's message would quote.
    static func redactPairs(_ text: String) -> (String, [String]) {
        let bytes = Array(text.utf8)
        // A bare word is a database name (libpq reads it so when it is the dbname parameter).
        guard bytes.contains(UInt8(ascii: "=")) else { return (text, []) }
        func isSpace(_ index: Int) -> Bool { index < bytes.count && [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C].contains(bytes[index]) }
        var output: [UInt8] = []
        var secrets: [String] = []
        var index = 0
        func string(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        while index < bytes.count {
            let pairStart = index
            while isSpace(index) { index += 1 }
            let keyStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "="), !isSpace(index) { index += 1 }
            let key = string(keyStart..<index)
            while isSpace(index) { index += 1 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                if key.isEmpty { break }
                let rest = string(keyStart..<bytes.count)
                secrets += rest.split(whereSeparator: \.isWhitespace).map(String.init)
                return (String(decoding: output, as: UTF8.self) + " ***", secrets)
            }
            index += 1
            while isSpace(index) { index += 1 }
            let valueStart = index
            var value: [UInt8] = []
            if index < bytes.count, bytes[index] == UInt8(ascii: "'") {
                index += 1
                var closed = false
                while index < bytes.count {
                    if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { value.append(bytes[index + 1]); index += 2; continue }
                    if bytes[index] == UInt8(ascii: "'") { closed = true; index += 1; break }
                    value.append(bytes[index])
                    index += 1
                }
                if !closed {
                    // Unterminated: libpq refuses it, and the quote swallowed the rest of the string,
                    // which may hold a password of another key: all of it is a secret.
                    let rest = string(valueStart..<bytes.count)
                    secrets += [rest, String(decoding: value, as: UTF8.self)] + rest.split { $0.isWhitespace || $0 == "=" || $0 == "'" }.map(String.init)
                    return (String(decoding: output + bytes[pairStart..<valueStart], as: UTF8.self) + "***", secrets)
                }
            } else {
                while index < bytes.count, !isSpace(index) {
                    if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { value.append(bytes[index + 1]); index += 2; continue }
                    value.append(bytes[index])
                    index += 1
                }
            }
            output += bytes[pairStart..<valueStart]
            if isSecret(key) {
                secrets += [string(valueStart..<index), String(decoding: value, as: UTF8.self)]
                output += Array("***".utf8)
            } else {
                output += bytes[valueStart..<index]
            }
        }
        output += bytes[index...]
        return (String(decoding: output, as: UTF8.self), secrets)
    }
}
