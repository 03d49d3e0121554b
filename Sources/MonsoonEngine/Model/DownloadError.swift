/// Why a download (or a fetch) failed, or why its last attempt did.
///
/// A struct around an open set of codes, so new codes never break callers.
public struct DownloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as stored in the queue's database and shown to users.
        public let rawValue: String
        /// A code from its name; unknown names (from a newer Monsoon, say) are kept as they are.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// The server answered with an error status (see `httpStatus`).
        public static let httpStatus = Code(rawValue: "httpStatus")
        /// A network failure: DNS, refused, reset, timed out, TLS.
        public static let network = Code(rawValue: "network")
        /// The transfer made no progress for longer than the stall threshold.
        public static let stalled = Code(rawValue: "stalled")
        /// The body ended before the length the server announced.
        public static let truncated = Code(rawValue: "truncated")
        /// A web page came back where audio or video was expected.
        public static let webPageNotMedia = Code(rawValue: "webPageNotMedia")
        /// Not enough free space for the file (checked before and while writing).
        public static let notEnoughDiskSpace = Code(rawValue: "notEnoughDiskSpace")
        /// The server's TLS certificate was issued by an authority that is not trusted (self-signed,
        /// or a private CA): trusting that authority (a CA bundle) would let it through.
        public static let untrustedCertificate = Code(rawValue: "untrustedCertificate")
        /// A URL or redirect to a scheme other than http and https.
        public static let unsupportedScheme = Code(rawValue: "unsupportedScheme")
        /// A URL from a feed (or one of its redirects) led to a loopback, private or link-local
        /// address (`AddressScope.publicOnly`).
        public static let privateAddress = Code(rawValue: "privateAddress")
        /// More than the allowed number of redirects.
        public static let tooManyRedirects = Code(rawValue: "tooManyRedirects")
        /// The server asked to wait longer than the backoff cap.
        public static let retryAfterTooLong = Code(rawValue: "retryAfterTooLong")
        /// The body was larger than the fetch's byte cap.
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// Reading or writing the file failed.
        public static let fileSystem = Code(rawValue: "fileSystem")
        /// With --warc: the download is whole but its WARC records could not be written; its part is kept.
        public static let warcNotWritten = Code(rawValue: "warcNotWritten")
        /// The server's answers contradicted what was known (the file changed, a range that
        /// cannot be) more times in a row than the download starts over for.
        public static let restartLimit = Code(rawValue: "restartLimit")
        /// The server's answer could not be used (bad Content-Range, say).
        public static let protocolViolation = Code(rawValue: "protocolViolation")
        /// The fetch was cancelled.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The engine refused a change of the download's state that it asked of itself: a fault
        /// in Monsoon, to be reported. The download fails rather than go on in a state it cannot be in.
        public static let engineFault = Code(rawValue: "engineFault")
    }

    /// The kind of failure, for deciding what to do about it.
    public var code: Code
    /// One line saying what happened and, where it can, what to do.
    public var message: String
    /// The HTTP status, for `httpStatus` and related failures.
    public var httpStatus: Int?

    /// An error of kind `code` with a one-line `message`, and the HTTP status when one is behind it.
    public init(_ code: Code, _ message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }

    /// The message.
    public var description: String { message }
}
