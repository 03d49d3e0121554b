import MonsoonEngine

extension DownloadError.Code {
    /// The kind of failure in a few words for people, where its name would be a program's word.
    var words: String { failureWords[self] ?? "a failure of a kind this Monsoon does not know" }
}

/// One entry for every kind the engine has (a test reads them from the engine's source).
private let failureWords: [DownloadError.Code: String] = [
    .httpStatus: "an error status from the server",
    .network: "a network failure",
    .stalled: "stalled: no data for too long",
    .truncated: "the body ended early",
    .webPageNotMedia: "a web page, not media",
    .notEnoughDiskSpace: "not enough disk space",
    .untrustedCertificate: "a certificate that is not trusted",
    .unsupportedScheme: "not an http or https URL",
    .privateAddress: "a private or local address",
    .tooManyRedirects: "too many redirects",
    .retryAfterTooLong: "the server asked to wait too long",
    .tooLarge: "larger than allowed",
    .fileSystem: "the file could not be read or written",
    .warcNotWritten: "its WARC records could not be written",
    .restartLimit: "the file kept changing on the server",
    .protocolViolation: "an answer that could not be used",
    .cancelled: "cancelled",
    .engineFault: "a fault in Monsoon",
]
