import CLibXML2
import FoundationEssentials
import Glibc

/// Builds a ``ParsedFeed`` from libxml2's SAX2 events (see ``SAXParser``).
///
/// It keeps a stack of the open elements (classified once per distinct name, ``FeedElement``), the `xml:base` in force,
/// and the text of the one element being read. Elements are read by where they stand: a `title` directly in `channel`
/// is the show's, one directly in `item` the episode's, any other is ignored.
final class FeedBuilder {
    let documentURL: URL
    /// So the builder can stop it.
    var parser: xmlParserCtxtPtr?
    private(set) var stopped = false
    /// The root element's name when it is not a feed's (`html`, `opml` …), and its namespace; parsing stops there.
    private(set) var foreignRoot: String?
    private(set) var foreignRootNamespace: String?
    private(set) var sawRoot = false
    private(set) var firstError: SAXParser.Failure?
    /// The bounds on nesting (one element more stops the parse) and on each text's length.
    var limits = FeedLimits()
    /// The line of the element that went deeper than ``FeedLimits/maxDepth``, which stopped the parse.
    private(set) var tooDeepAt: Int?

    @exclusivity(unchecked) var feed = ParsedFeed(kind: .rss)
    /// `title` (0) over `dc:title` (1).
    @exclusivity(unchecked) var feedTitleRank = Int.max
    @exclusivity(unchecked) var feedDescriptionRank = Int.max
    @exclusivity(unchecked) var artworkRank = Int.max
    @exclusivity(unchecked) var authorRank = Int.max

    @exclusivity(unchecked) private(set) var stack: [FeedElement] = []
    @exclusivity(unchecked) private var bases: [(depth: Int, url: URL)] = []
    @exclusivity(unchecked) private var atomDocument = false
    @exclusivity(unchecked) private(set) var cdfDocument = false
    @exclusivity(unchecked) private var classified = [ClassifiedName](repeating: ClassifiedName(), count: 256)

    enum Field {
        case none
        case feedTitle, feedLink, feedDescription, feedLanguage, feedArtwork, feedAuthor, feedNewURL, feedPodcastGUID
        case itemTitle, itemItunesTitle, itemDCTitle, itemLink, itemGUID, itemDate, itemSummary, itemDuration, itemSeason, itemEpisode, itemExplicit
    }

    /// The element whose text is being collected, the rank of its source (lower is preferred), and its depth.
    @exclusivity(unchecked) var field = Field.none
    @exclusivity(unchecked) var captureRank = 0
    @exclusivity(unchecked) private var captureDepth = 0
    /// Child elements of the element being read are written back as tags (descriptions with raw XHTML).
    @exclusivity(unchecked) private var captureMarkup = false
    /// The element being read says its text is base64 (`type="base64"`, Atom 0.3's `mode="base64"`).
    @exclusivity(unchecked) var captureBase64 = false
    /// The Atom title being read is XHTML or declared plain text: its text is the title as written.
    @exclusivity(unchecked) var captureLiteral = false
    /// The depth of the `<script>` or `<style>` in such a title, whose text is left out; `.max` outside one.
    @exclusivity(unchecked) private var hiddenDepth = Int.max
    @exclusivity(unchecked) var text: [UInt8] = []

    @exclusivity(unchecked) var item = ItemDraft()
    /// The depth of the open `item`/`entry`, or -1.
    @exclusivity(unchecked) var itemDepth = -1
    @exclusivity(unchecked) var identities = EpisodeIdentity.Registry()

    /// Without one, episodes stay in `feed.episodes`.
    var sink: EpisodeStream.Sink?
    var batchSize = Int.max
    /// What `sink` threw: the parse stopped there.
    private(set) var sinkError: (any Error)?
    private(set) var delivered = 0
    /// Whether the text libxml2 reads holds a control character XML forbids, asked the first time a CDATA section holds
    /// one (libxml2 never sees those). If so, libxml2 will stop there and ``FeedParser`` parse the cleaned text again
    /// after the items this parse handed out, so this parse cleans its CDATA sections too, as the second one reads them.
    var textHasForbiddenCharacter: (() -> Bool)?
    private var cleansCDATA: Bool?
    /// Items ended so far, kept or left out; the first `skipping` are passed over, neither kept nor
    /// counted (a second parse of a repaired text, whose earlier items the first one handed out).
    @exclusivity(unchecked) var finishedItems = 0
    var skipping = 0

    init(documentURL: URL) {
        self.documentURL = documentURL
        text.reserveCapacity(4096)
        stack.reserveCapacity(32)
    }

    /// Without the retain and release a plain `takeUnretainedValue()` costs on every callback (the parser holds it alive).
    @inline(__always)
    static func with(_ context: UnsafeMutableRawPointer, _ body: (FeedBuilder) -> Void) {
        Unmanaged<FeedBuilder>.fromOpaque(context)._withUnsafeGuaranteedRef(body)
    }

    var base: URL { bases.last?.url ?? documentURL }

    func resolve(_ text: String?) -> URL? {
        text.flatMap { FeedURL.resolve($0, against: base) }
    }

    func startElement(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?,
                      _ attributeCount: Int, _ attributePointer: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        let depth = stack.count
        guard depth < limits.maxDepth else {
            tooDeepAt = Int(parser?.pointee.input?.pointee.line ?? 0)
            stop()
            return
        }
        let attributes = SAXAttributes(pointer: attributePointer, count: attributeCount)
        if field != .none {
            // Inside an element being read: its children are part of its text.
            stack.append(.other)
            if captureMarkup { appendStartTag(localname, prefix, attributes) }
            // A script's or style sheet's text is no title's.
            if captureLiteral, hiddenDepth == .max, SAXAttributes.equals(localname, "script") || SAXAttributes.equals(localname, "style") {
                hiddenDepth = depth
            }
            return
        }
        let element = classify(localname, prefix, uri)
        stack.append(element)
        if attributeCount > 0, let xmlBase = attributes.xmlBase, let url = FeedURL.resolve(xmlBase, against: base) {
            bases.append((depth, url))
        }
        guard depth > 0 else {
            startRoot(element, localname, uri, attributes)
            // An Atom feed's language is its root's `xml:lang` (`en_US` meaning `en-US`).
            if feed.kind == .atom, let language = attributes.xmlLang.flatMap(FeedText.trimmed) { feed.language = language.replacing("_", with: "-") }
            return
        }
        let parent = stack[depth - 1]
        switch parent {
        case .channel, .rdf, .atomFeed:
            channelChild(element, attributes, depth: depth)
        case .rss:
            // Items straight in <rss>, without a <channel>: seen in the wild.
            if element == .item { startItem(depth: depth) }
        case .item, .atomEntry:
            if itemDepth == depth - 1 { itemChild(element, attributes) }
        case .image:
            if element == .url, depth >= 2, [.channel, .rdf].contains(stack[depth - 2]), artworkRank > 1 {
                capture(.feedArtwork, rank: 1)
            }
        case .itunesOwner:
            if element == .itunesName, authorRank > 3 { capture(.feedAuthor, rank: 3) }
        case .atomAuthor:
            if element == .atomName, depth >= 2, stack[depth - 2] == .atomFeed, authorRank > 1 { capture(.feedAuthor, rank: 1) }
        case .mediaGroup:
            if element == .mediaContent, itemDepth == depth - 2 { mediaContent(attributes) }
        default:
            break
        }
    }

    func endElement(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?) {
        let depth = stack.count - 1
        guard depth >= 0 else { return }
        stack.removeLast()
        if depth == hiddenDepth { hiddenDepth = .max }
        if field != .none {
            if depth == captureDepth {
                finishCapture()
            } else if captureMarkup {
                appendEndTag(localname, prefix)
            }
        }
        if depth == itemDepth { finishItem() }
        if let last = bases.last, last.depth == depth { bases.removeLast() }
    }

    func characters(_ characters: UnsafePointer<xmlChar>, _ length: Int) {
        guard field != .none, stack.count <= hiddenDepth else { return }
        text.append(contentsOf: UnsafeBufferPointer(start: characters, count: length))
    }

    /// The CDATA sections ``FeedRepair`` took out of the text: the buffer they are in, and their ranges.
    var cdata: (source: UnsafeBufferPointer<UInt8>, ranges: [Range<Int>]) = (UnsafeBufferPointer(start: nil, count: 0), [])

    /// `<?monsoon-cdata N?>` stands for CDATA section N (``FeedRepair/cdataTarget``); other processing instructions mean
    /// nothing to a feed.
    func processingInstruction(_ target: UnsafePointer<xmlChar>, _ data: UnsafePointer<xmlChar>?) {
        guard field != .none, stack.count <= hiddenDepth, let data, SAXAttributes.equals(target, "monsoon-cdata") else { return }
        var index = 0
        var offset = 0
        while ByteScanner.isDigit(data[offset]), index < Int.max / 10 {
            index = index * 10 + Int(data[offset] - 0x30)
            offset += 1
        }
        guard offset > 0, index < cdata.ranges.count else { return }
        let range = cdata.ranges[index]
        guard range.lowerBound >= 0, range.upperBound <= cdata.source.count else { return }
        let content = UnsafeBufferPointer(rebasing: cdata.source[range])
        guard content.contains(where: { $0 < 0x20 && $0 != 0x0A && $0 != 0x09 }) else {
            text.append(contentsOf: content)
            return
        }
        if cleansCDATA == nil, content.contains(where: Self.isForbidden) { cleansCDATA = textHasForbiddenCharacter?() ?? false }
        let cleans = cleansCDATA == true
        // Line breaks normalized as an XML parser does: CR LF and a lone CR become LF.
        for (offset, byte) in content.enumerated() where !(byte == 0x0D && offset + 1 < content.count && content[offset + 1] == 0x0A) {
            if byte == 0x0D {
                text.append(0x0A)
            } else if !cleans || !Self.isForbidden(byte) {
                text.append(byte)
            }
        }
    }

    /// A control character XML forbids (tab, line feed and carriage return are allowed).
    static func isForbidden(_ byte: UInt8) -> Bool {
        byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D
    }

    /// If there is a sink and it has not failed, with the metadata read so far.
    func deliver() {
        guard let sink, sinkError == nil, !feed.episodes.isEmpty else { return }
        let batch = feed.episodes
        delivered += batch.count
        feed.episodes = []
        feed.episodes.reserveCapacity(min(batchSize, 4096))
        do {
            try sink(batch, feed)
        } catch {
            sinkError = error
            stop()
        }
    }

    func recordError(_ error: xmlError) {
        // Namespace errors (an undeclared `itunes:` prefix) are not fatal: libxml2 goes on, and so do we.
        guard error.level == XML_ERR_FATAL, firstError == nil else { return }
        var message = error.message.map { String(cString: $0) } ?? "not well-formed"
        message = message.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingBlanks()
        firstError = SAXParser.Failure(message: message, line: Int(error.line), column: Int(error.int2), code: Int(error.code))
    }

    private func stop() {
        stopped = true
        if let parser { SAXParser.xml.xmlStopParser(parser) }
    }

    private func startRoot(_ element: FeedElement, _ localname: UnsafePointer<xmlChar>, _ uri: UnsafePointer<xmlChar>?,
                           _ attributes: SAXAttributes) {
        sawRoot = true
        switch element {
        case .rss, .rdf:
            feed.kind = .rss
        case .channel:
            // Microsoft's CDF, RSS's forerunner: a root <CHANNEL HREF=…> of <ITEM HREF=… LASTMOD=…> with RSS's names.
            feed.kind = .rss
            cdfDocument = true
            feed.link = resolve(attributes["HREF"])
        case .atomFeed:
            feed.kind = .atom
            atomDocument = true
        default:
            foreignRoot = String(cString: localname)
            foreignRootNamespace = uri.map { String(cString: $0) }
            stop()
        }
    }

    func capture(_ field: Field, rank: Int = 0, markup: Bool = false) {
        self.field = field
        captureRank = rank
        captureDepth = stack.count - 1
        captureMarkup = markup
        captureBase64 = false
        captureLiteral = false
        hiddenDepth = .max
        text.removeAll(keepingCapacity: true)
    }

    func startItem(depth: Int) {
        item = ItemDraft()
        itemDepth = depth
    }

    struct ClassifiedName {
        var localname: UnsafeRawPointer?
        var prefix: UnsafeRawPointer?
        var uri: UnsafeRawPointer?
        var element = FeedElement.other
    }

    /// Cached by the names' addresses in a small direct-mapped table: libxml2 interns names, prefixes and namespace URIs
    /// for the parser's life, so a feed's few distinct names are classified once and then found by three pointer compares.
    private func classify(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?) -> FeedElement {
        let name = UnsafeRawPointer(localname), prefixPointer = prefix.map(UnsafeRawPointer.init), uriPointer = uri.map(UnsafeRawPointer.init)
        var hash = UInt(bitPattern: Int(bitPattern: name)) &* 0x9E37_79B9_7F4A_7C15
        hash ^= UInt(bitPattern: Int(bitPattern: uriPointer)) &* 0xC2B2_AE3D_27D4_EB4F
        hash ^= UInt(bitPattern: Int(bitPattern: prefixPointer)) &* 0x1656_67B1_9E37_79F9
        // Two slots per name (the hash's slot and its neighbour), so two names that collide still both stay.
        let first = Int(truncatingIfNeeded: hash >> 56)
        let one = classified[first], other = classified[first ^ 1]
        if one.localname == name, one.prefix == prefixPointer, one.uri == uriPointer { return one.element }
        if other.localname == name, other.prefix == prefixPointer, other.uri == uriPointer { return other.element }
        let element = FeedElement.classify(localname: localname, prefix: prefix, uri: uri, atomDocument: atomDocument)
        // Only after the root: the root decides whether un-namespaced names are Atom.
        if sawRoot {
            let slot = classified[first].localname == nil ? first : first ^ 1
            classified[slot] = ClassifiedName(localname: name, prefix: prefixPointer, uri: uriPointer, element: element)
        }
        return element
    }

    private func appendStartTag(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?, _ attributes: SAXAttributes) {
        text.append(UInt8(ascii: "<"))
        appendName(localname, prefix)
        attributes.forEach { name, value in
            text.append(UInt8(ascii: " "))
            text.append(contentsOf: name)
            text.append(contentsOf: "=\"".utf8)
            for byte in value {
                if byte == UInt8(ascii: "\"") { text.append(contentsOf: "&quot;".utf8) } else { text.append(byte) }
            }
            text.append(UInt8(ascii: "\""))
        }
        text.append(UInt8(ascii: ">"))
    }

    private func appendEndTag(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?) {
        text.append(contentsOf: "</".utf8)
        appendName(localname, prefix)
        text.append(UInt8(ascii: ">"))
    }

    private func appendName(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?) {
        if let prefix {
            text.append(contentsOf: UnsafeBufferPointer(start: prefix, count: strlen(UnsafeRawPointer(prefix).assumingMemoryBound(to: CChar.self))))
            text.append(UInt8(ascii: ":"))
        }
        text.append(contentsOf: UnsafeBufferPointer(start: localname, count: strlen(UnsafeRawPointer(localname).assumingMemoryBound(to: CChar.self))))
    }
}

/// Five pointers each: local name, prefix, URI, value start, value end.
struct SAXAttributes {
    let pointer: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    let count: Int

    subscript(name: StaticString) -> String? {
        bytes(name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The raw UTF-8 value of the un-prefixed attribute `name`.
    func bytes(_ name: StaticString) -> UnsafeBufferPointer<UInt8>? {
        guard let pointer else { return nil }
        for index in 0..<count {
            let entry = pointer + index * 5
            guard entry[1] == nil, let localname = entry[0], SAXAttributes.equals(localname, name) else { continue }
            guard let start = entry[3], let end = entry[4] else { return UnsafeBufferPointer(start: nil, count: 0) }
            return UnsafeBufferPointer(start: start, count: end - start)
        }
        return nil
    }

    /// `xml:base`.
    var xmlBase: String? { value("base", prefix: "xml") }

    var xmlLang: String? { value("lang", prefix: "xml") }

    /// RSS 1.0's `rdf:about`, trimmed; nil when empty.
    var rdfAbout: String? { value("about", prefix: "rdf").flatMap(FeedText.trimmed) }

    private func value(_ name: StaticString, prefix wanted: StaticString) -> String? {
        guard let pointer else { return nil }
        for index in 0..<count {
            let entry = pointer + index * 5
            guard let prefix = entry[1], let localname = entry[0], SAXAttributes.equals(prefix, wanted),
                  SAXAttributes.equals(localname, name) else { continue }
            return SAXAttributes.value(entry)
        }
        return nil
    }

    func forEach(_ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> Void) {
        guard let pointer else { return }
        for index in 0..<count {
            let entry = pointer + index * 5
            guard let localname = entry[0], let start = entry[3], let end = entry[4] else { continue }
            let nameLength = strlen(UnsafeRawPointer(localname).assumingMemoryBound(to: CChar.self))
            body(UnsafeBufferPointer(start: localname, count: nameLength), UnsafeBufferPointer(start: start, count: end - start))
        }
    }

    private static func value(_ entry: UnsafeMutablePointer<UnsafePointer<xmlChar>?>) -> String {
        guard let start = entry[3], let end = entry[4] else { return "" }
        return String(decoding: UnsafeBufferPointer(start: start, count: end - start), as: UTF8.self)
    }

    static func equals(_ string: UnsafePointer<xmlChar>, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        let bytes = literal.utf8Start
        for index in 0..<length where string[index] != bytes[index] { return false }
        return string[length] == 0
    }
}
