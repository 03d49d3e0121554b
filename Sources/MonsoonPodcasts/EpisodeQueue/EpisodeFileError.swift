import MonsoonBasics

/// The domain of ``EpisodeFileError``.
public enum EpisodeFileDomain: ErrorDomain {}

/// A file of an episode, or of an archive, that could not be handled. Its message is one line: what failed, on which
/// file, and where it can, what to do.
public typealias EpisodeFileError = CodedError<EpisodeFileDomain>

extension EpisodeFileError.Code {
    /// Reading, writing or deleting a file or folder failed (the message gives the system's reason).
    public static var fileSystem: Self { Self(rawValue: "fileSystem") }
    /// The disk is full.
    public static var diskFull: Self { Self(rawValue: "diskFull") }
    /// A folder has no manifest: it is not a Monsoon archive.
    public static var notAnArchive: Self { Self(rawValue: "notAnArchive") }
    /// A manifest cannot be read as one, or lists a file outside its folder.
    public static var damagedManifest: Self { Self(rawValue: "damagedManifest") }
    /// A damaged file has nowhere to be fetched again from.
    public static var noSource: Self { Self(rawValue: "noSource") }
}

extension EpisodeFileError {
    public init(_ message: String) { self.init(.fileSystem, message) }
}
