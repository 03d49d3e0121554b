/// A failure of the shared library: rules that cannot be used, a feed URL that is not one, a
/// refresh whose lease was lost. One line for users, and a code for programs.
///
/// A struct around an open set of codes (as swift-system's `Errno`), so a new kind never breaks
/// a caller's `switch`.
public struct SharedLibraryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// A code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// An archive's rules that cannot be kept (a pattern that is not a regular expression, a
        /// template that cannot name files, a count under 1): the message names the option.
        public static let invalidRules = Code(rawValue: "invalidRules")
        /// A feed URL that is not an http or https URL with a host.
        public static let invalidFeedURL = Code(rawValue: "invalidFeedURL")
        /// The refresh's lease was lost before it could finish (its job was taken back and given to
        /// another worker): nothing it found was kept, and the job is the other worker's.
        public static let leaseLost = Code(rawValue: "leaseLost")
    }

    /// The kind of failure, for deciding what to do about it.
    public var code: Code
    /// One line: what is wrong and what to do.
    public var message: String

    /// An error of kind `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
