/// Why a library operation was refused.
///
/// A struct around an open set of codes (as swift-system's `Errno`), so a new reason never
/// breaks a caller's `switch`. The static functions named after the codes make the errors.
public struct LibraryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of refusal.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// A code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// Nothing fits what was asked (no such podcast or episode, not in the queue, no media file).
        public static let notFound = Code(rawValue: "notFound")
        /// More than one podcast's title matched.
        public static let ambiguous = Code(rawValue: "ambiguous")
    }

    /// The kind of refusal, for deciding what to do about it.
    public var code: Code
    /// One line: what was not found, or which podcasts matched (up to five, with their ids), and what to do.
    public var message: String

    /// A refusal of kind `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// Nothing fits what was asked; `message` says which.
    public static func notFound(_ message: String) -> LibraryError { LibraryError(.notFound, message) }

    /// More than one podcast matched; `message` names them.
    public static func ambiguous(_ message: String) -> LibraryError { LibraryError(.ambiguous, message) }
}
