import FoundationEssentials

/// What to download and where to put it.
public struct DownloadRequest: Sendable, Equatable {
    /// Where the finished file goes.
    ///
    /// `@nonexhaustive`: more kinds of destination may come, so a `switch` outside this package needs a `default`.
    @nonexhaustive
    public enum Destination: Sendable, Equatable {
        /// Exactly this file path.
        case file(String)
        /// Into this folder, under the name the response gives (Content-Disposition,
        /// else the last path component of the final URL, else `download`).
        case directory(String)
        /// Into `folder` as `stem` plus the extension the response implies: the final URL's
        /// (after redirects), else the media type's. For names chosen by the caller (an
        /// episode's, from a template) whose extension only the server knows.
        case named(folder: String, stem: String)
        /// Nowhere: the body is counted and, with `checksum`, hashed (SHA-256, in
        /// `Download.checksum`), and nothing is written. For measuring the network path;
        /// only a manager without a store takes it.
        case discard(checksum: Bool)

        /// The folder the file goes into ("" for `.discard`).
        public var folder: String {
            switch self {
            case .file(let path): return path.parentPath
            case .directory(let folder), .named(let folder, _): return folder
            case .discard: return ""
            }
        }
    }

    /// The download's id; an empty one asks the manager for a fresh `d<N>` id at enqueue.
    public var id: DownloadID
    /// What to fetch: an http or https URL with a host (anything else is refused at enqueue).
    public var url: URL
    public var destination: Destination
    /// Higher starts first; equal priorities start in enqueue order.
    public var priority: Int
    /// The size the caller expects (from a feed, say), used for the free-space check.
    public var expectedSize: Int?
    /// The kind of media expected, e.g. `audio/mpeg` or just `audio`; a web page
    /// in answer to an audio or video request is refused.
    public var expectedMediaType: String?
    /// Extra request headers, e.g. `User-Agent`.
    public var headers: [String: String]
    /// Free-form pairs kept with the download for the caller.
    public var userInfo: [String: String]
    /// Where the caller's own folders end (an archive's root): no symbolic link in the
    /// destination's folders below it is followed, nor one at the file's own name or its part's.
    /// The root itself may be a link. Nil: the destination's own folder is the root.
    public var root: String?
    /// The most bytes the file may have; a larger body (or one that never ends) stops the
    /// download with `.tooLarge`, its part kept. Nil: only `EngineConfiguration.maxFileBytes`.
    public var sizeLimit: SizeLimit?
    /// The addresses the download may reach: `.publicOnly` for a URL a feed gave (refused, for
    /// good, where it leads to a loopback, private or link-local address).
    public var addresses: AddressScope
    /// Follow redirects (http and https only, 10 at most). Without, a redirect is the answer: the
    /// download fails with its status (a cluster worker asks each hop itself, to space the
    /// requests to a host).
    public var followsRedirects: Bool
    /// Who asked for it, and answers for its file (see `DownloadOwner`); `.direct` by default.
    public var owner: DownloadOwner

    /// A cap on one download's size, with why it is what it is (for the error message).
    public struct SizeLimit: Sendable, Equatable {
        /// The most bytes the file may have.
        public var bytes: Int
        /// Where the cap comes from, said after the size ("twice the feed's declared length
        /// plus 64 MiB", "the cap for artwork").
        public var reason: String

        /// A cap of `bytes`, explained by `reason`.
        public init(bytes: Int, reason: String) {
            self.bytes = bytes
            self.reason = reason
        }
    }

    /// A request with the given fields; only the id, URL and destination are required.
    public init(
        id: DownloadID,
        url: URL,
        destination: Destination,
        priority: Int = 0,
        expectedSize: Int? = nil,
        expectedMediaType: String? = nil,
        headers: [String: String] = [:],
        userInfo: [String: String] = [:],
        sizeLimit: SizeLimit? = nil,
        root: String? = nil,
        addresses: AddressScope = .any,
        followsRedirects: Bool = true,
        owner: DownloadOwner = .direct
    ) {
        self.id = id
        self.url = url
        self.destination = destination
        self.priority = priority
        self.expectedSize = expectedSize
        self.expectedMediaType = expectedMediaType
        self.headers = headers
        self.userInfo = userInfo
        self.sizeLimit = sizeLimit
        self.root = root
        self.addresses = addresses
        self.followsRedirects = followsRedirects
        self.owner = owner
    }
}

extension DownloadRequest.Destination {
    /// The name a download of `url` into a folder gets when the response names no file
    /// (no Content-Disposition, no redirect): the URL's last path component, sanitized.
    public static func defaultFileName(for url: URL) -> String {
        FileNaming.name(contentDisposition: nil, finalURL: url.absoluteString)
    }
}

extension DownloadRequest {
    /// Whether `url` is one Monsoon fetches: http or https, with a host.
    public static func isDownloadable(_ url: URL) -> Bool {
        let scheme = url.scheme?.lowercased()
        return (scheme == "http" || scheme == "https") && url.host.map { !$0.isEmpty } ?? false
    }

    /// Why `url` cannot be downloaded (only http and https, with a host), or nil when it can.
    /// Checked when a download is enqueued and again when it starts: rows written to the queue by
    /// other means (an episode queue, another process) pass only the second check.
    /// It names the scheme, not the URL, which may carry credentials (the engine cannot redact).
    static func refusal(of url: URL) -> String? {
        guard !isDownloadable(url) else { return nil }
        let scheme = url.scheme?.lowercased()
        guard let scheme, scheme != "http", scheme != "https" else {
            return "only http and https URLs can be downloaded; this one " + (scheme == nil ? "has no scheme" : "has no host")
        }
        return "only http and https URLs can be downloaded; this one is \(scheme.prefix(20)):"
    }
}
