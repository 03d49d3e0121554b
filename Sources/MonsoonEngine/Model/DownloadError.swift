// The engine's errors are `CodedError`s, and its package-wide `Locked` and `HTTPDate` live there
// too: clients of the engine get them with it.
@_exported import MonsoonBasics

/// The domain of ``DownloadError``.
public enum DownloadDomain: ErrorDomain {
    /// What a download's failure carries besides its code.
    public struct Details: Hashable, Sendable {
        /// The HTTP status, for `httpStatus` and related failures.
        public var httpStatus: Int?
    }
}

/// Why a download (or a fetch) failed, or why its last attempt did. Its message is one line
/// saying what happened and, where it can, what to do; its code's name is stored in the queue's
/// database and shown to users.
public typealias DownloadError = CodedError<DownloadDomain>

extension DownloadError.Code {
    /// The server answered with an error status (see `httpStatus`).
    public static var httpStatus: Self { Self(rawValue: "httpStatus") }
    /// A network failure: DNS, refused, reset, timed out, TLS.
    public static var network: Self { Self(rawValue: "network") }
    /// The transfer made no progress for longer than the stall threshold.
    public static var stalled: Self { Self(rawValue: "stalled") }
    /// The body ended before the length the server announced.
    public static var truncated: Self { Self(rawValue: "truncated") }
    /// A web page came back where audio or video was expected.
    public static var webPageNotMedia: Self { Self(rawValue: "webPageNotMedia") }
    /// Not enough free space for the file (checked before and while writing).
    public static var notEnoughDiskSpace: Self { Self(rawValue: "notEnoughDiskSpace") }
    /// The server's TLS certificate was issued by an authority that is not trusted (self-signed,
    /// or a private CA): trusting that authority (a CA bundle) would let it through.
    public static var untrustedCertificate: Self { Self(rawValue: "untrustedCertificate") }
    /// A URL or redirect to a scheme other than http and https.
    public static var unsupportedScheme: Self { Self(rawValue: "unsupportedScheme") }
    /// A URL from a feed (or one of its redirects) led to a loopback, private or link-local
    /// address (`AddressScope.publicOnly`).
    public static var privateAddress: Self { Self(rawValue: "privateAddress") }
    /// More than the allowed number of redirects.
    public static var tooManyRedirects: Self { Self(rawValue: "tooManyRedirects") }
    /// The server asked to wait longer than the backoff cap.
    public static var retryAfterTooLong: Self { Self(rawValue: "retryAfterTooLong") }
    /// The body was larger than the fetch's byte cap.
    public static var tooLarge: Self { Self(rawValue: "tooLarge") }
    /// Reading or writing the file failed.
    public static var fileSystem: Self { Self(rawValue: "fileSystem") }
    /// With --warc: the download is whole but its WARC records could not be written; its part is kept.
    public static var warcNotWritten: Self { Self(rawValue: "warcNotWritten") }
    /// The server's answers contradicted what was known (the file changed, a range that
    /// cannot be) more times in a row than the download starts over for.
    public static var restartLimit: Self { Self(rawValue: "restartLimit") }
    /// The server's answer could not be used (bad Content-Range, say).
    public static var protocolViolation: Self { Self(rawValue: "protocolViolation") }
    /// The fetch was cancelled.
    public static var cancelled: Self { Self(rawValue: "cancelled") }
    /// The engine refused a change of the download's state that it asked of itself: a fault
    /// in Monsoon, to be reported. The download fails rather than go on in a state it cannot be in.
    public static var engineFault: Self { Self(rawValue: "engineFault") }
}

extension DownloadError {
    /// An error of kind `code` with a one-line `message`, and the HTTP status when one is behind it.
    public init(_ code: Code, _ message: String, httpStatus: Int? = nil) {
        self.init(code, message, details: .init(httpStatus: httpStatus))
    }
}
