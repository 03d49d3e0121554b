import Foundation
import MonsoonEngine
#if canImport(FoundationXML)
import FoundationXML
#endif

/// OPML 2.0 subscription lists: reading one to import, writing one to export.
public enum OPML {
    /// One feed of a list.
    public struct Outline: Sendable, Equatable {
        /// The outline's `title`, else its `text`; nil when it has neither.
        public var title: String?
        /// The feed's address (`xmlUrl`); outlines without one are not feeds and are skipped.
        public var feedURL: URL
        /// The show's web page (`htmlUrl`), if given.
        public var siteURL: URL?

        /// An outline for the feed at `feedURL`.
        public init(title: String?, feedURL: URL, siteURL: URL? = nil) {
            self.title = title
            self.feedURL = feedURL
            self.siteURL = siteURL
        }
    }

    /// Why a list could not be read.
    public struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        /// One line: what the file is instead, or where its XML breaks.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    /// The feeds of an OPML document, in order, nested outlines included, repeats left out.
    /// A document that is not one fails with a message that says what it is instead.
    public static func read(_ data: Data) throws(ReadError) -> [Outline] {
        let what = "an OPML subscription list is an XML file with <opml> at its root"
        let other: String? = data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            if !bytes.contains(where: { !ByteScanner.isSpace($0) }) { return "the file is empty; \(what)" }
            if HTMLPage.looksLikeHTML(bytes) { return "not an OPML subscription list: it is a web page" }
            return DocumentKind.sniff(bytes).map { "not an OPML subscription list: it is \($0)" }
        }
        if let other { throw ReadError(message: other) }
        let parser = XMLParser(data: data)
        parser.externalEntityResolvingPolicy = .never
        parser.shouldResolveExternalEntities = false
        let collector = Collector()
        parser.delegate = collector
        // Foundation's own error text ("The operation could not be completed. (NSXMLParserErrorDomain
        // error 4.)") means nothing to a user: say where the XML breaks instead.
        let parsed = parser.parse()
        if parsed && collector.sawOPML { return collector.outlines }
        if isFeed(data) {
            throw ReadError(message: "it is a podcast feed, not a subscription list: subscribe to its address with 'monsoon add URL'")
        }
        guard parsed else {
            throw ReadError(message: "not an OPML subscription list: it is not well-formed XML (line \(parser.lineNumber), column \(parser.columnNumber)); \(what)")
        }
        throw ReadError(message: "not an OPML subscription list: its root element is <\(collector.root ?? "")>; \(what)")
    }

    /// Whether `data` is a feed (given where a list was expected), for the message.
    private static func isFeed(_ data: Data) -> Bool {
        do {
            _ = try FeedParser.parse(data, url: URL(fileURLWithPath: "/"))
            return true
        } catch {
            return false
        }
    }

    /// An OPML 2.0 document listing `outlines`.
    public static func write(_ outlines: [Outline], title: String = "Monsoon subscriptions", date: Date = Date()) -> String {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<opml version=\"2.0\">\n  <head>\n"
        text += "    <title>\(escape(title))</title>\n    <dateCreated>\(HTTPDate.format(date))</dateCreated>\n  </head>\n  <body>\n"
        for outline in outlines {
            let name = escape(outline.title ?? outline.feedURL.absoluteString)
            text += "    <outline type=\"rss\" text=\"\(name)\" title=\"\(name)\" xmlUrl=\"\(escape(outline.feedURL.absoluteString))\""
            if let site = outline.siteURL { text += " htmlUrl=\"\(escape(site.absoluteString))\"" }
            text += "/>\n"
        }
        return text + "  </body>\n</opml>\n"
    }

    static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var outlines: [Outline] = []
        var seen = Set<String>()
        var sawOPML = false
        /// The root element's name.
        var root: String?

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
            // Only an <opml> root makes a list: one buried in another document does not.
            if root == nil {
                root = name
                sawOPML = name.lowercased() == "opml"
            }
            guard name.lowercased() == "outline" else { return }
            // Attribute names vary in case across the apps that write OPML.
            var lowered: [String: String] = [:]
            for (key, value) in attributes { lowered[key.lowercased()] = value }
            guard let text = lowered["xmlurl"]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty,
                  let url = URL(string: text), seen.insert(url.absoluteString).inserted else { return }
            outlines.append(Outline(title: lowered["title"] ?? lowered["text"], feedURL: url, siteURL: lowered["htmlurl"].flatMap(URL.init(string:))))
        }
    }
}
