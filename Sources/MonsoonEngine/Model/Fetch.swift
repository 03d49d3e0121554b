import FoundationEssentials

/// A small body to fetch into memory (a feed, say).
public struct FetchRequest: Sendable, Equatable {
    /// What to fetch; redirects are followed to http and https only.
    public var url: URL
    /// Extra headers, e.g. `If-None-Match`.
    public var headers: [String: String]
    /// The largest body accepted, after decompression; larger fails with `.tooLarge`.
    public var maxBytes: Int
    /// Seconds the whole attempt may take.
    public var timeout: Double
    /// Ask for gzip, deflate, br and zstd and decode them.
    public var acceptsCompression: Bool
    /// Retry a host that cannot be reached (unknown host, connection refused) per the retry
    /// policy. A one-shot fetch the user waits for (`inspect URL`, `add URL`) sets it to false:
    /// the failure is then reported at once instead of after the backoff.
    public var retriesConnectionFailures: Bool
    /// Follow redirects (http and https only). Without, a redirect is the answer: its status and
    /// `Location` (a queue shared by machines looks where a download would go before it goes).
    public var followsRedirects = true
    /// Ask with HEAD: the answer's status and headers, no body.
    public var headOnly = false
    /// The addresses it may reach: `.publicOnly` for a URL a feed gave.
    public var addresses = AddressScope.any

    /// A fetch of `url`: by default at most 50 MiB within 60 seconds, asking for compression.
    public init(url: URL, headers: [String: String] = [:], maxBytes: Int = 50 << 20, timeout: Double = 60, acceptsCompression: Bool = true,
                retriesConnectionFailures: Bool = true) {
        self.url = url
        self.headers = headers
        self.maxBytes = maxBytes
        self.timeout = timeout
        self.acceptsCompression = acceptsCompression
        self.retriesConnectionFailures = retriesConnectionFailures
    }
}

/// The final response of a fetch, after redirects and retries.
public struct FetchResponse: Sendable, Equatable {
    /// One response header, as the server sent it.
    public struct Header: Sendable, Equatable {
        /// The header's name, in the server's case.
        public var name: String
        /// The value, without surrounding spaces and tabs.
        public var value: String
    }

    /// The HTTP status of the final response (304, 404 … are answers, not errors).
    public var status: Int
    /// The final response's headers, in the order they came (redirects' headers are not kept).
    public var headers: [Header]
    /// The URL after redirects.
    public var finalURL: URL
    /// The statuses of the redirects followed, in order (empty for none).
    public var redirects: [Int]
    /// The body, decoded when it came compressed; at most `FetchRequest.maxBytes` bytes. Error statuses keep theirs too.
    public var body: Data

    /// The first value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// True when every redirect followed was permanent (301 or 308), so the
    /// caller may replace the URL it has with `finalURL`.
    public var isPermanentlyRedirected: Bool {
        !redirects.isEmpty && redirects.allSatisfy { $0 == 301 || $0 == 308 }
    }
}
