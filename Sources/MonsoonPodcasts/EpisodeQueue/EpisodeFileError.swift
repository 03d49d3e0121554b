/// A file of an episode, or of an archive, that could not be handled.
///
/// A struct around an open set of codes (as swift-system's `Errno`), so a new kind never
/// breaks a caller's `switch`.
public struct EpisodeFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// A code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// Reading, writing or deleting a file or folder failed (the message gives the system's reason).
        public static let fileSystem = Code(rawValue: "fileSystem")
        /// The disk is full.
        public static let diskFull = Code(rawValue: "diskFull")
        /// A folder has no manifest: it is not a Monsoon archive.
        public static let notAnArchive = Code(rawValue: "notAnArchive")
        /// A manifest cannot be read as one, or lists a file outside its folder.
        public static let damagedManifest = Code(rawValue: "damagedManifest")
        /// A damaged file has nowhere to be fetched again from.
        public static let noSource = Code(rawValue: "noSource")
    }

    /// The kind of failure, for deciding what to do about it.
    public var code: Code
    /// One line: what failed, on which file, and where it can, what to do.
    public var message: String

    /// An error of kind `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A `.fileSystem` error saying `message`.
    public init(_ message: String) { self.init(.fileSystem, message) }

    /// The message.
    public var description: String { message }
}
