import MonsoonBasics

extension OPML {
    /// The domain of ``ReadError``.
    public enum ReadDomain: ErrorDomain {
        /// Where the XML breaks (1-based), when that is the reason.
        public struct Details: Hashable, Sendable {
            public var line: Int?
            /// In characters.
            public var column: Int?
        }
    }

    /// Why a list could not be read. Its message is one line: what the file is instead, or where its XML breaks, and what
    /// to do. It never names the file: the caller knows what it read (a path, standard input) and says so.
    public typealias ReadError = CodedError<ReadDomain>
}

extension OPML.ReadError.Code {
    /// The file is empty, or holds only whitespace.
    public static var empty: Self { Self(rawValue: "empty") }
    /// A web page, a document of another kind (which the message names), XML whose root is not `<opml>`, or not XML at
    /// all (then with `line` and `column`).
    public static var notOPML: Self { Self(rawValue: "notOPML") }
    /// The file is a podcast feed (RSS or Atom), not a list of them: subscribe to its address instead.
    public static var podcastFeed: Self { Self(rawValue: "podcastFeed") }
    /// The file declares a text encoding this system cannot convert; saved as UTF-8 it would be read.
    public static var unsupportedEncoding: Self { Self(rawValue: "unsupportedEncoding") }
    /// The list stops in the middle (an incomplete copy): nothing of it was read.
    public static var truncated: Self { Self(rawValue: "truncated") }
    /// The list's XML breaks at `line` and `column`: nothing of it was read.
    public static var malformed: Self { Self(rawValue: "malformed") }
    /// Larger than ``FeedLimits/maxBytes``: refused unread.
    public static var tooLarge: Self { Self(rawValue: "tooLarge") }
    /// More attributes than ``FeedLimits/maxAttributes`` (refused unread), or nested deeper than ``FeedLimits/maxDepth``.
    public static var tooComplex: Self { Self(rawValue: "tooComplex") }
}

extension OPML.ReadError {
    public init(_ code: Code, _ message: String, line: Int? = nil, column: Int? = nil) {
        self.init(code, message, details: .init(line: line, column: column))
    }
}
