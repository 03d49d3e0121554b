import Foundation

/// Why a WARC file could not be opened, written or closed (`--warc`).
///
/// A struct around an open set of codes, so new codes never break callers.
public struct WARCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The WARC's folder is missing or cannot be written to (checked before anything is downloaded).
        public static let notWritable = Code(rawValue: "warcNotWritable")
        /// The disk holding the WARC is full.
        public static let diskFull = Code(rawValue: "warcDiskFull")
        /// Reading a downloaded file, or writing, flushing or renaming a WARC file failed.
        public static let fileSystem = Code(rawValue: "warcFileSystem")
        /// zlib refused to compress (out of memory).
        public static let compression = Code(rawValue: "warcCompression")
        /// OpenSSL cannot compute SHA-1 (a FIPS build that forbids it, or out of memory).
        public static let digest = Code(rawValue: "warcDigest")
        /// The WARC was closed, or an earlier write failed: nothing more is written to it.
        public static let closed = Code(rawValue: "warcClosed")
    }

    public var code: Code
    /// One line saying what happened and what to do.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// A failed system call on `what` (a path, a record), in plain words.
    static func system(_ what: String, errno code: Int32) -> WARCError {
        switch code {
        case ENOSPC, EDQUOT:
            return WARCError(.diskFull, "\(what): the disk is full; free some space (or give --warc a file on another disk), then run again")
        case EACCES, EPERM, EROFS:
            return WARCError(.notWritable, "\(what): \(String(cString: strerror(code))); give --warc a file in a folder you can write to")
        default:
            return WARCError(.fileSystem, "\(what): \(String(cString: strerror(code)))")
        }
    }

    /// The download's failure when its WARC records could not be written: it fails (never held
    /// for space: the WARC's disk may not be the download's), its part kept for the next run.
    var downloadError: DownloadError {
        DownloadError(.warcNotWritten, "its WARC record could not be written (\(message)); the downloaded part is kept, and the next run records and places it")
    }
}
