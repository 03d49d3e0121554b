import FoundationEssentials

/// What the server answers for one path. See ``TestServer/setRoute(_:_:)``.
public struct Route: Sendable {
    /// The content served (for status 200: the full representation that ranges select from).
    public var body: Body
    /// The status of a normal answer. Anything but 200 is permanent and served as is
    /// (e.g. 404/410/500 with `body` as an HTML page): no ranges, no conditional requests.
    public var status: Int = 200
    /// Sent as Content-Type.
    public var contentType: String = "application/octet-stream"
    /// Sent as ETag; give it with its quotes, e.g. `"\"v1\""` (or `"W/\"v1\""` for a weak one).
    public var etag: String? = nil
    /// Sent as Last-Modified (IMF-fixdate, whole seconds).
    public var lastModified: Date? = nil
    /// Sent as Content-Disposition.
    public var contentDisposition: String? = nil
    /// `false`: ignore Range and If-Range, always answer 200 with the whole body, no Accept-Ranges.
    public var supportsRanges: Bool = true
    /// `true`: serve ranges without checking If-Range, like a broken server or cache,
    /// so a client must notice a changed resource by the validators of the 206 itself.
    public var ignoresIfRange: Bool = false
    /// `true`: 206 answers carry neither ETag nor Last-Modified (with `ignoresIfRange`, a server
    /// that serves another version's bytes for a range and gives no way to tell).
    public var rangesWithoutValidators: Bool = false
    /// Given, a 206 answers at most this many bytes of the range asked for (an honest short
    /// answer: its Content-Range says where it ends).
    public var maxRangeLength: Int? = nil
    /// Sent verbatim as the status line of a normal answer (e.g. `"HTTP/1.1 200"`, without a
    /// reason phrase); nil: `HTTP/1.1 <status> <reason>`.
    public var statusLine: String? = nil
    /// Body bytes per second for each response (nil: as fast as the socket takes them).
    public var throttle: Int? = nil
    /// Further response headers, sent after the standard ones in this order.
    /// (A tuple of `Sendable` values is `Sendable`, so this stays a plain array of pairs.)
    public var extraHeaders: [(String, String)] = []
    /// Misbehaviour to inject; see ``Fault`` for how the list is consumed.
    public var faults: [Fault] = []
    /// Seconds the server waits before it answers each request (time to first byte), as a CDN
    /// fetching from its origin does; redirects and fault answers wait too.
    public var firstByteDelay: Double = 0
    /// `false`: no Content-Length; the body ends when the server closes the connection, as an
    /// old server or a stream does (with a large `.pattern` body: one that seems never to end).
    public var sendsContentLength: Bool = true
    /// Given, the route answers 403 to a request whose query lacks a good, unexpired signature
    /// from this signer (an expired private-feed link, say); see ``URLSigning``.
    public var signing: URLSigning? = nil
    /// Given, each answer waits until the gate is open (after `firstByteDelay`); see ``Gate``.
    public var gate: Gate? = nil
    /// With a `gate`: the head and this many body bytes of each answer go at once, then the rest
    /// waits for the gate (a transfer held in flight mid-body, for as long as the test needs).
    public var gateAfter: Int? = nil

    /// A route; every parameter but `body` has the default of the property it sets.
    public init(
        body: Body,
        status: Int = 200,
        contentType: String = "application/octet-stream",
        etag: String? = nil,
        lastModified: Date? = nil,
        contentDisposition: String? = nil,
        supportsRanges: Bool = true,
        ignoresIfRange: Bool = false,
        rangesWithoutValidators: Bool = false,
        maxRangeLength: Int? = nil,
        statusLine: String? = nil,
        throttle: Int? = nil,
        extraHeaders: [(String, String)] = [],
        faults: [Fault] = [],
        sendsContentLength: Bool = true,
        firstByteDelay: Double = 0,
        signing: URLSigning? = nil,
        gate: Gate? = nil,
        gateAfter: Int? = nil
    ) {
        self.body = body
        self.status = status
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.contentDisposition = contentDisposition
        self.supportsRanges = supportsRanges
        self.ignoresIfRange = ignoresIfRange
        self.rangesWithoutValidators = rangesWithoutValidators
        self.maxRangeLength = maxRangeLength
        self.statusLine = statusLine
        self.throttle = throttle
        self.extraHeaders = extraHeaders
        self.faults = faults
        self.sendsContentLength = sendsContentLength
        self.firstByteDelay = firstByteDelay
        self.signing = signing
        self.gate = gate
        self.gateAfter = gateAfter
    }

    /// A page answered with `status` and `text` as a `text/html` body, e.g. a permanent 404 or 500.
    public static func html(status: Int, _ text: String) -> Route {
        Route(body: .bytes(Array(text.utf8)), status: status, contentType: "text/html; charset=utf-8")
    }
}
