import MonsoonStore

/// Why a manager call was refused.
///
/// A struct around an open set of codes (as swift-system's `Errno`), so a new reason never
/// breaks a caller's `switch`: compare ``code`` with the codes below and let anything else
/// fall to a default. The static functions named after the codes make the errors.
public struct DownloadManagerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of refusal.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// A code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// A download with this id exists (enqueue with `replacingExisting` to replace it).
        public static let duplicate = Code(rawValue: "duplicate")
        /// No download has this id.
        public static let notFound = Code(rawValue: "notFound")
        /// The request cannot be downloaded (its URL's scheme, say), or the download is not in a
        /// state the call applies to.
        public static let invalidRequest = Code(rawValue: "invalidRequest")
        /// The manager has been shut down.
        public static let shutDown = Code(rawValue: "shutDown")
        /// The queue could not be read or saved (the database is busy for too long, or the disk failed).
        public static let storage = Code(rawValue: "storage")
        /// The queue could not be saved: the disk holding the database is full.
        public static let storageFull = Code(rawValue: "storageFull")
    }

    /// The kind of refusal, for deciding what to do about it.
    public var code: Code
    /// One line for users, naming the download where there is one.
    public var message: String
    /// The download the call named, when the refusal is about one.
    public var download: DownloadID?

    /// A refusal of kind `code`, saying `message`, about `download` when there is one.
    public init(_ code: Code, _ message: String, download: DownloadID? = nil) {
        self.code = code
        self.message = message
        self.download = download
    }

    /// The message.
    public var description: String { message }

    /// A download with id `id` exists.
    public static func duplicate(_ id: DownloadID) -> DownloadManagerError {
        DownloadManagerError(.duplicate, "a download with id \(id) already exists", download: id)
    }

    /// No download has id `id`.
    public static func notFound(_ id: DownloadID) -> DownloadManagerError {
        DownloadManagerError(.notFound, "no download has id \(id)", download: id)
    }

    /// Download `id` cannot start (or the call does not apply to it), for `reason`.
    public static func invalidRequest(_ id: DownloadID, _ reason: String) -> DownloadManagerError {
        DownloadManagerError(.invalidRequest, "download \(id) cannot start: \(reason)", download: id)
    }

    /// The manager has been shut down.
    public static let shutDown = DownloadManagerError(.shutDown, "the download manager has been shut down")

    /// The queue could not be read or saved; `message` says why.
    public static func storage(_ message: String) -> DownloadManagerError {
        DownloadManagerError(.storage, message)
    }

    /// The queue could not be read or saved for `cause`, said after `message`: `storageFull`
    /// when the disk holding the database is full (a caller may wait for room, or exit as for
    /// any full disk), else `storage`.
    public static func storage(_ message: String, cause: Error) -> DownloadManagerError {
        let full = (cause as? StoreError)?.isDiskFull ?? false
        return DownloadManagerError(full ? .storageFull : .storage, "\(message): \(cause)")
    }
}
