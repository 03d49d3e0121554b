import Foundation

/// Why a feed could not be read. Its ``message`` is one line that says what happened and,
/// where it can, what to do.
public struct FeedError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure: an open set (as swift-system's `Errno`), so a new kind never breaks a
    /// caller's `switch`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// A code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// Not a URL (for the fetching layer).
        public static let invalidURL = Code(rawValue: "invalidURL")
        /// A URL whose scheme cannot be fetched (for the fetching layer).
        public static let unsupportedScheme = Code(rawValue: "unsupportedScheme")
        /// DNS or connection failure (for the fetching layer).
        public static let network = Code(rawValue: "network")
        /// The server answered with an error status (for the fetching layer; see ``FeedError/httpStatus``).
        public static let httpStatus = Code(rawValue: "httpStatus")
        /// The body is empty, or holds only whitespace and comments.
        public static let empty = Code(rawValue: "empty")
        /// An HTML page came instead of a feed (see ``FeedError/alternateFeedURL``).
        public static let htmlPage = Code(rawValue: "htmlPage")
        /// Well-formed XML that is neither RSS nor Atom, or a document of another kind (an image, audio,
        /// a PDF, an archive, JSON …, from its first bytes or its media type), which the message names.
        public static let notAFeed = Code(rawValue: "notAFeed")
        /// XML that is broken beyond what the parser repairs (see ``FeedError/line`` and ``FeedError/column``).
        public static let malformed = Code(rawValue: "malformed")
        /// Larger than ``FeedLimits/maxBytes``, or entity expansion would make it so.
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// Built as no real feed is: an element with more attributes than ``FeedLimits/maxAttributes``,
        /// or elements nested deeper than ``FeedLimits/maxDepth``. Refused before it costs minutes.
        public static let tooComplex = Code(rawValue: "tooComplex")
        /// A file that cannot be read.
        public static let unreadable = Code(rawValue: "unreadable")
    }

    /// The kind of failure, for deciding what to do about it.
    public var code: Code
    /// One line: what happened and, where it can, what to do.
    public var message: String
    /// For `.malformed`: where the parser stopped (1-based; the column counts characters). For
    /// `.tooComplex`: the line of the element refused.
    public var line: Int?
    /// The column on `line`, counted in characters from 1.
    public var column: Int?
    /// For `.htmlPage`: the feed the page links with `<link rel="alternate" type="application/rss+xml" href=…>`
    /// (or `atom+xml`), resolved against the page's URL.
    public var alternateFeedURL: URL?
    /// For `.httpStatus`.
    public var httpStatus: Int?

    /// An error of kind `code`; the other fields are for the codes they name.
    public init(_ code: Code, _ message: String, line: Int? = nil, column: Int? = nil,
                alternateFeedURL: URL? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        self.alternateFeedURL = alternateFeedURL
        self.httpStatus = httpStatus
    }

    /// The message.
    public var description: String { message }
}
