import FoundationEssentials
import Glibc
import MonsoonBasics

/// The domain of ``WARCError``.
public enum WARCDomain: ErrorDomain {}

/// Why a WARC file could not be opened, written or closed (`--warc`). Its message is one line
/// saying what happened and what to do.
public typealias WARCError = CodedError<WARCDomain>

extension WARCError.Code {
    /// The WARC's folder is missing or cannot be written to (checked before anything is downloaded).
    public static var notWritable: Self { Self(rawValue: "warcNotWritable") }
    /// The disk holding the WARC is full.
    public static var diskFull: Self { Self(rawValue: "warcDiskFull") }
    /// Reading a downloaded file, or writing, flushing or renaming a WARC file failed.
    public static var fileSystem: Self { Self(rawValue: "warcFileSystem") }
    /// zlib refused to compress (out of memory).
    public static var compression: Self { Self(rawValue: "warcCompression") }
    /// OpenSSL cannot compute SHA-1 (a FIPS build that forbids it, or out of memory).
    public static var digest: Self { Self(rawValue: "warcDigest") }
    /// The WARC was closed, or an earlier write failed: nothing more is written to it.
    public static var closed: Self { Self(rawValue: "warcClosed") }
}

extension WARCError {
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
