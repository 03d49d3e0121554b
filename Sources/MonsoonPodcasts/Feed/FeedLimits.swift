/// Bounds on what ``FeedParser`` accepts, so a hostile or broken document cannot exhaust memory or time.
public struct FeedLimits: Sendable, Equatable {
    /// Larger documents are refused with `.tooLarge` before any parsing: the largest real feeds are around 30 MB.
    public var maxBytes: Int = 50 << 20
    /// Expansions of entities the document's DTD declares, nested ones too, before `.tooLarge`: real feeds use a handful,
    /// an entity bomb ("billion laughs") needs billions.
    public var maxEntityExpansions: Int = 100_000
    /// All the pages of a paged feed together: the walk stops at the page that would pass it, with `.tooLarge`. Real paged
    /// feeds come to a few megabytes, while 100 pages of 50 MiB arrive in a few megabytes when the server compresses them.
    public var maxTotalBytes: Int = 256 << 20
    /// Attributes in one element, else `.tooComplex` before parsing: libxml2 compares each attribute with all those before
    /// it (400,000 in one element took 48 s). Real feeds have fewer than 20.
    public var maxAttributes: Int = 256
    /// Else `.tooComplex`: each open element costs memory until it ends (49 MB of `<a>` took 336 MB). libxml2's own limit
    /// where it checks; real feeds nest fewer than 10 deep, 20 with XHTML content.
    public var maxDepth: Int = 256
    /// A longer title or author is cut there and ends with `…`: real titles have a few hundred bytes at most.
    public var maxTitleBytes: Int = 4 << 10
    /// Any other element's text is cut there and ends with `…`: show notes holding a whole transcript have a few hundred KB.
    public var maxTextBytes: Int = 1 << 20

    public init() {}

    public init(maxBytes: Int, maxEntityExpansions: Int = 100_000) {
        self.maxBytes = maxBytes
        self.maxEntityExpansions = maxEntityExpansions
    }
}
