import FoundationEssentials
import MonsoonBasics

/// The domain of ``FeedError``.
public enum FeedDomain: ErrorDomain {
    /// What a feed's failure carries besides its code, for the codes they name.
    public struct Details: Hashable, Sendable {
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
    }
}

/// Why a feed could not be read. Its message is one line that says what happened and, where
/// it can, what to do; its details (`line`, `column`, `alternateFeedURL`, `httpStatus`) are for
/// the codes they name.
public typealias FeedError = CodedError<FeedDomain>

extension FeedError.Code {
    /// Not a URL (for the fetching layer).
    public static var invalidURL: Self { Self(rawValue: "invalidURL") }
    /// A URL whose scheme cannot be fetched (for the fetching layer).
    public static var unsupportedScheme: Self { Self(rawValue: "unsupportedScheme") }
    /// DNS or connection failure (for the fetching layer).
    public static var network: Self { Self(rawValue: "network") }
    /// The server answered with an error status (for the fetching layer; see `httpStatus`).
    public static var httpStatus: Self { Self(rawValue: "httpStatus") }
    /// The body is empty, or holds only whitespace and comments.
    public static var empty: Self { Self(rawValue: "empty") }
    /// An HTML page came instead of a feed (see `alternateFeedURL`).
    public static var htmlPage: Self { Self(rawValue: "htmlPage") }
    /// Well-formed XML that is neither RSS nor Atom, or a document of another kind (an image, audio,
    /// a PDF, an archive, JSON …, from its first bytes or its media type), which the message names.
    public static var notAFeed: Self { Self(rawValue: "notAFeed") }
    /// XML that is broken beyond what the parser repairs (see `line` and `column`).
    public static var malformed: Self { Self(rawValue: "malformed") }
    /// Larger than ``FeedLimits/maxBytes``, or entity expansion would make it so.
    public static var tooLarge: Self { Self(rawValue: "tooLarge") }
    /// Built as no real feed is: an element with more attributes than ``FeedLimits/maxAttributes``,
    /// or elements nested deeper than ``FeedLimits/maxDepth``. Refused before it costs minutes.
    public static var tooComplex: Self { Self(rawValue: "tooComplex") }
    /// A file that cannot be read.
    public static var unreadable: Self { Self(rawValue: "unreadable") }
}

extension FeedError {
    /// An error of kind `code`; the other fields are for the codes they name.
    public init(_ code: Code, _ message: String, line: Int? = nil, column: Int? = nil,
                alternateFeedURL: URL? = nil, httpStatus: Int? = nil) {
        self.init(code, message, details: .init(line: line, column: column, alternateFeedURL: alternateFeedURL, httpStatus: httpStatus))
    }
}
