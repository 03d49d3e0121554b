/// Bounds on what ``FeedParser`` accepts, so a hostile or broken document cannot exhaust memory or time.
public struct FeedLimits: Sendable, Equatable {
    /// Documents larger than this are refused with `.tooLarge` (before any parsing). 50 MiB by default:
    /// the largest real feeds (decades of daily shows) are around 30 MB.
    public var maxBytes: Int = 50 << 20
    /// How many references to entities declared in the document's DTD may be expanded in all (nested
    /// references count too). Past it the document is refused with `.tooLarge`: real feeds use a handful,
    /// an entity bomb ("billion laughs") needs billions.
    public var maxEntityExpansions: Int = 100_000
    /// All the pages of a paged feed together, the first included. The page that would go past it is
    /// not read, nor those after it: the walk stops there as at a page that cannot be read, with a
    /// `.tooLarge` error. 256 MiB by default: real paged feeds come to a few megabytes, while 100 pages
    /// of 50 MiB each arrive in a few megabytes when the server compresses them.
    public var maxTotalBytes: Int = 256 << 20
    /// Attributes in one element. A document with an element that has more is refused with
    /// `.tooComplex` before it is parsed: libxml2 compares each attribute with all those before it,
    /// so 400,000 attributes in one element took 48 s, and the 50 MiB a feed may have would take
    /// hours. 256 by default: real feeds have fewer than 20.
    public var maxAttributes: Int = 256
    /// How deeply elements nest. A document that nests deeper is refused with `.tooComplex`: each open
    /// element costs memory until it ends (49 MB of `<a>` took 336 MB). 256 by default, libxml2's own
    /// limit in the parsers that check it: real feeds nest fewer than 10 deep, 20 with XHTML content.
    public var maxDepth: Int = 256
    /// The text of a title or an author: a longer one is cut there and ends with `…`. 4 KiB by default:
    /// more than a screen shows, and real titles have a few hundred bytes at most.
    public var maxTitleBytes: Int = 4 << 10
    /// The text of any other element (a description, show notes, a link, a guid): a longer one is cut
    /// there and ends with `…`. 1 MiB by default: show notes holding a whole transcript have a few
    /// hundred kilobytes.
    public var maxTextBytes: Int = 1 << 20

    /// The default limits.
    public init() {}

    /// Limits with `maxBytes` in bytes, and at most `maxEntityExpansions` expansions of the document's
    /// own entities; the others the defaults.
    public init(maxBytes: Int, maxEntityExpansions: Int = 100_000) {
        self.maxBytes = maxBytes
        self.maxEntityExpansions = maxEntityExpansions
    }
}
