import FoundationEssentials
import MonsoonEngine

/// OPML 2.0 subscription lists: reading one to import, writing one to export.
///
/// A list is read whole or not at all: XML that breaks anywhere (a character XML forbids, a file cut off) is an error
/// that says where, never a list of the outlines before the break.
public enum OPML {
    public struct Outline: Sendable, Equatable {
        /// The outline's `title`, else its `text`.
        public var title: String?
        /// `xmlUrl`: outlines without one are not feeds and are skipped.
        public var feedURL: URL
        /// `htmlUrl`.
        public var siteURL: URL?

        public init(title: String?, feedURL: URL, siteURL: URL? = nil) {
            self.title = title
            self.feedURL = feedURL
            self.siteURL = siteURL
        }
    }

    /// For messages about files that are not one.
    static let what = "an OPML subscription list is an XML file with <opml> at its root"

    /// The feeds of an OPML document, in order, nested outlines included, repeats left out.
    ///
    /// A document that is not one fails with a message that says what it is instead. One larger than `limits.maxBytes`
    /// is refused unread, and so is one with an element of more than `limits.maxAttributes` attributes. External
    /// entities are never loaded and entities the document declares are never expanded.
    public static func read(_ data: Data, limits: FeedLimits = FeedLimits()) throws(ReadError) -> [Outline] {
        guard data.count <= limits.maxBytes else { throw tooLarge(data.count, limits) }
        var result: Result<[Outline], ReadError> = .success([])
        data.withUnsafeBytes { raw in
            result = Result { () throws(ReadError) in try read(bytes: raw.bindMemory(to: UInt8.self), limits: limits) }
        }
        return try result.get()
    }

    static func read(bytes: UnsafeBufferPointer<UInt8>, limits: FeedLimits) throws(ReadError) -> [Outline] {
        if !bytes.contains(where: { !ByteScanner.isSpace($0) }) { throw ReadError(.empty, "the file is empty; \(what)") }
        if HTMLPage.looksLikeHTML(bytes) { throw ReadError(.notOPML, "not an OPML subscription list: it is a web page") }
        if let kind = DocumentKind.sniff(bytes) { throw ReadError(.notOPML, "not an OPML subscription list: it is \(kind)") }
        let parser = OPMLParser(limits: limits)
        // libxml2 is handed UTF-8 and told so, never left to switch encodings itself (its conversion errors print on
        // stderr). Unlike feeds, nothing is repaired: bytes that are not UTF-8 in a list that says it is are an error
        // libxml2 reports with its place, as is any character XML forbids.
        let (detected, bomLength) = FeedDecoding.detect(bytes)
        let body = UnsafeBufferPointer(rebasing: bytes[bomLength...])
        switch detected ?? FeedDecoding.declaredEncoding(body) {
        case .utf8:
            parser.parse(body)
        case .windows1252:
            FeedDecoding.windows1252ToUTF8(body).withUnsafeBufferPointer { parser.parse($0) }
        case .iconv(let name, let unit):
            guard let text = FeedDecoding.iconvToUTF8(body, from: name, unit: unit) else {
                throw ReadError(.unsupportedEncoding, "it says its text is in the encoding '\(name)', which this system cannot read; save it as UTF-8")
            }
            text.withUnsafeBufferPointer { parser.parse($0) }
        }
        return try outcome(of: parser)
    }

    private static func outcome(of parser: OPMLParser) throws(ReadError) -> [Outline] {
        if let excess = parser.excess {
            // What no real list is: said before what it would make libxml2 say.
            let (what, line) = switch excess {
            case .attributes(let line, let name):
                ("its \(name.map { "<\($0)>" } ?? "element") at line \(line) has more than \(parser.limits.maxAttributes) attributes, "
                 + "which no real list has", line)
            case .depth(let line):
                ("it nests elements more than \(parser.limits.maxDepth) deep at line \(line), which no real list does", line)
            }
            throw ReadError(.tooComplex, "\(what), so none of it was read; fix that line or export the list again", line: line)
        }
        if let root = parser.root, root.lowercased() != "opml" {
            if ["rss", "feed", "rdf"].contains(root.lowercased()) {
                throw ReadError(.podcastFeed, "it is a podcast feed, not a subscription list: subscribe to its address with 'monsoon add URL'")
            }
            throw ReadError(.notOPML, "not an OPML subscription list: its root element is <\(root)>; \(what)")
        }
        guard let failure = parser.failure else { return parser.outlines }
        let place = "line \(failure.line), column \(failure.column)"
        guard parser.root != nil else {
            throw ReadError(.notOPML, "not an OPML subscription list: it is not well-formed XML (\(place): \(failure.reason)); \(what)",
                            line: failure.line, column: failure.column)
        }
        if failure.endsEarly {
            throw ReadError(.truncated, "the list ends early, at \(place) (an incomplete copy?), so none of it was read; copy or export the whole list again",
                            line: failure.line, column: failure.column)
        }
        throw ReadError(.malformed, "the list is not well-formed XML at \(place) (\(failure.reason)), so none of it was read; fix that line or export the list again",
                        line: failure.line, column: failure.column)
    }

    static func tooLarge(_ size: Int, _ limits: FeedLimits) -> ReadError {
        // "50 MiB, more than the limit of 50 MiB" would puzzle: a size that rounds to the limit is given in bytes.
        let shown = ByteCount.format(size) == ByteCount.format(limits.maxBytes) ? "\(size) bytes" : ByteCount.format(size)
        return ReadError(.tooLarge, "it is \(shown), more than the limit of \(ByteCount.format(limits.maxBytes)) for a subscription list; it was not read")
    }
}
