import MonsoonBasics
import MonsoonStore

/// The domain of ``DownloadManagerError``.
public enum DownloadManagerDomain: ErrorDomain {
    /// What a manager's refusal carries besides its code.
    public struct Details: Hashable, Sendable {
        /// The download the call named, when the refusal is about one.
        public var download: DownloadID?
    }
}

/// Why a manager call was refused. Its message is one line for users, naming the download where
/// there is one. The static functions named after the codes make the errors.
public typealias DownloadManagerError = CodedError<DownloadManagerDomain>

extension DownloadManagerError.Code {
    /// A download with this id exists (enqueue with `replacingExisting` to replace it).
    public static var duplicate: Self { Self(rawValue: "duplicate") }
    /// No download has this id.
    public static var notFound: Self { Self(rawValue: "notFound") }
    /// The request cannot be downloaded (its URL's scheme, say), or the download is not in a
    /// state the call applies to.
    public static var invalidRequest: Self { Self(rawValue: "invalidRequest") }
    /// The manager has been shut down.
    public static var shutDown: Self { Self(rawValue: "shutDown") }
    /// The queue could not be read or saved (the database is busy for too long, or the disk failed).
    public static var storage: Self { Self(rawValue: "storage") }
    /// The queue could not be saved: the disk holding the database is full.
    public static var storageFull: Self { Self(rawValue: "storageFull") }
}

extension DownloadManagerError {
    /// A refusal of kind `code`, saying `message`, about `download` when there is one.
    public init(_ code: Code, _ message: String, download: DownloadID? = nil) {
        self.init(code, message, details: .init(download: download))
    }

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
    public static var shutDown: DownloadManagerError { DownloadManagerError(.shutDown, "the download manager has been shut down") }

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
