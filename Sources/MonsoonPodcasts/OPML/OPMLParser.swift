import CLibXML2
import FoundationEssentials

/// libxml2's push parser over an OPML document's UTF-8 text, collecting the feeds of its outlines.
///
/// Not Foundation's `XMLParser`: on Linux it runs libxml2 in recovery mode, so an outline holding a character XML
/// forbids (ESC, BEL, U+FFFE) is silently dropped, and it never tells libxml2 the input ended, so a document cut off
/// (`<opml><body><outline`) is never found broken. Here recovery is off, the end is said, the first fatal error kept.
///
/// Security: no external entity is ever loaded (`resolveEntity` answers nothing, `XML_PARSE_NONET`, no DTD loading),
/// the only entities substituted are XML's five (the handler records no declaration), and `XML_PARSE_HUGE` is off, so
/// libxml2's limits on names, text and nesting stay in force.
final class OPMLParser {
    struct Failure {
        /// libxml2's message when no plainer one is known.
        var reason: String
        var line: Int
        var column: Int
        /// Whether the document stopped inside an element: the break came when the input ended.
        var endsEarly: Bool
        /// `xmlParserErrors`, 0 for none.
        var code: Int32 = 0
    }

    private(set) var root: String?
    /// In order, without repeats.
    private(set) var outlines: [OPML.Outline] = []
    private(set) var failure: Failure?
    /// Stopped the parse (or kept it from starting).
    private(set) var excess: Excess?
    let limits: FeedLimits
    private var seen = Set<String>()
    private var depth = 0
    /// Set while the final, terminating chunk is parsed: an error then is an end the document did not expect.
    private var ending = false
    private var context: xmlParserCtxtPtr?

    enum Excess {
        /// The element is named when its name is plain text.
        case attributes(line: Int, name: String?)
        case depth(line: Int)
    }

    init(limits: FeedLimits) {
        self.limits = limits
    }

    /// Parses UTF-8 `text` whole; read ``root``, ``outlines``, ``failure`` and ``excess`` afterwards.
    func parse(_ text: UnsafeBufferPointer<UInt8>) {
        // libxml2 would compare each attribute of an element with all those before it (see AttributeScan).
        if let offset = AttributeScan.crowdedElement(in: text, limit: limits.maxAttributes) {
            let (line, name) = AttributeScan.describe(text, at: offset)
            excess = .attributes(line: line, name: name)
            return
        }
        var handler = xmlSAXHandler()
        handler.startElementNs = { user, localname, prefix, _, _, _, attributeCount, _, attributes in
            guard let user, let localname else { return }
            Unmanaged<OPMLParser>.fromOpaque(user).takeUnretainedValue().start(localname, prefix, Int(attributeCount), attributes)
        }
        handler.endElementNs = { user, _, _, _ in
            guard let user else { return }
            Unmanaged<OPMLParser>.fromOpaque(user).takeUnretainedValue().depth -= 1
        }
        handler.serror = { user, error in
            guard let user, let error else { return }
            Unmanaged<OPMLParser>.fromOpaque(user).takeUnretainedValue().record(error.pointee)
        }
        let made = SAXParser.withParser(&handler, user: Unmanaged.passUnretained(self).toOpaque()) { parser in
            context = parser
            defer { context = nil }
            feed(text, to: parser)
        }
        if case .failure(let reason) = made {
            failure = Failure(reason: reason.message, line: 0, column: 0, endsEarly: false)
        }
    }

    private func feed(_ text: UnsafeBufferPointer<UInt8>, to parser: xmlParserCtxtPtr) {
        // In slices: one call with more than 10,000,000 bytes trips libxml2's lookup limit.
        var offset = 0
        let slice = 256 << 10
        while offset < text.count, failure == nil, root.map(Self.isOPML) != false {
            let count = min(slice, text.count - offset)
            let status = text.baseAddress!.advanced(by: offset).withMemoryRebound(to: CChar.self, capacity: count) {
                SAXParser.xml.xmlParseChunk(parser, $0, Int32(count), 0)
            }
            if status != 0 { break }
            offset += count
        }
        if failure == nil, root.map(Self.isOPML) != false {
            ending = true
            _ = SAXParser.xml.xmlParseChunk(parser, nil, 0, 1)
        }
        if let found = failure, found.code == Int32(XML_ERR_INVALID_CHAR.rawValue),
           let scalar = Self.scalar(in: text, line: found.line, column: found.column), !Self.isXMLCharacter(scalar) {
            // Name the character: the line may hold it invisibly (ESC, BEL) or look fine (U+FFFE).
            failure?.reason = String(cFormat: "the character U+%04X, which XML does not allow", scalar.value)
        }
        if failure == nil, root.map(Self.isOPML) != false, parser.pointee.wellFormed == 0 {
            // Not well-formed without a fatal error reported: say where the parser stood.
            let input = parser.pointee.input
            failure = Failure(reason: "the document is not well-formed", line: Int(input?.pointee.line ?? 0),
                              column: Int(input?.pointee.col ?? 0), endsEarly: depth > 0)
        }
    }

    private static func isOPML(_ name: String) -> Bool { name.lowercased() == "opml" }

    /// XML 1.0's production `Char`.
    static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D, 0x20 ... 0xD7FF, 0xE000 ... 0xFFFD, 0x10000 ... 0x10FFFF: return true
        default: return false
        }
    }

    /// Both from 1, the column in characters; nil unless the text is valid UTF-8 up to there.
    static func scalar(in text: UnsafeBufferPointer<UInt8>, line: Int, column: Int) -> Unicode.Scalar? {
        guard line >= 1, column >= 1 else { return nil }
        var start = 0
        for _ in 1 ..< line {
            guard let newline = text[start...].firstIndex(of: 0x0A) else { return nil }
            start = newline + 1
        }
        var decoder = UTF8()
        var bytes = text[start...].makeIterator()
        var index = 1
        while case .scalarValue(let scalar) = decoder.decode(&bytes) {
            if index == column { return scalar }
            if scalar == "\n" { return nil }
            index += 1
        }
        return nil
    }

    private func start(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?, _ count: Int,
                       _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        depth += 1
        guard depth <= limits.maxDepth else {
            excess = .depth(line: Int(context?.pointee.input?.pointee.line ?? 0))
            if let context { SAXParser.xml.xmlStopParser(context) }
            return
        }
        let name = String(cString: localname)
        if root == nil {
            root = name
            // Only an <opml> root makes a list (one buried in another document does not): stop at once.
            if !Self.isOPML(name), let context { SAXParser.xml.xmlStopParser(context) }
            return
        }
        guard prefix == nil, name.lowercased() == "outline", let attributes else { return }
        // Attribute names vary in case across the apps that write OPML. Five pointers an attribute:
        // local name, prefix, namespace, value start, value end (values are not NUL-terminated).
        var values: [String: String] = [:]
        for index in 0..<count {
            let base = index * 5
            guard attributes[base + 1] == nil, let key = attributes[base], let start = attributes[base + 3],
                  let end = attributes[base + 4] else { continue }
            let bytes = UnsafeBufferPointer(start: start, count: end - start)
            values[String(cString: key).lowercased()] = String(decoding: bytes, as: UTF8.self)
        }
        guard let text = values["xmlurl"]?.trimmingWhitespace(), !text.isEmpty,
              let url = URL(string: text), seen.insert(url.absoluteString).inserted else { return }
        outlines.append(OPML.Outline(title: values["title"] ?? values["text"], feedURL: url, siteURL: values["htmlurl"].flatMap(URL.init(string:))))
    }

    private func record(_ error: xmlError) {
        // Namespace errors (an undeclared prefix) are not fatal: libxml2 goes on, and so do we.
        guard error.level == XML_ERR_FATAL, failure == nil, error.code != Int32(XML_ERR_USER_STOP.rawValue) else { return }
        let message = (error.message.map { String(cString: $0) } ?? "not well-formed")
            .split(whereSeparator: \.isNewline).joined(separator: " ").trimmingBlanks()
        failure = Failure(reason: Self.plain(code: error.code, message: message), line: Int(error.line), column: Int(error.int2),
                          endsEarly: ending && depth > 0, code: error.code)
    }

    /// In words, for the errors a hand-edited or damaged list has.
    static func plain(code: Int32, message: String) -> String {
        switch xmlParserErrors(rawValue: UInt32(code)) {
        case XML_ERR_INVALID_CHAR where message.contains("UTF-8"), XML_ERR_INVALID_ENCODING:
            return "bytes that are not UTF-8 text"
        case XML_ERR_INVALID_CHAR, XML_ERR_INVALID_CHARREF, XML_ERR_INVALID_DEC_CHARREF, XML_ERR_INVALID_HEX_CHARREF:
            return "a character XML does not allow, such as a control character"
        case XML_ERR_TAG_NAME_MISMATCH:
            return "an end tag that does not match the element it closes"
        case XML_ERR_UNDECLARED_ENTITY, XML_ERR_ENTITY_IS_EXTERNAL:
            return "an entity XML does not know; only &amp; &lt; &gt; &quot; &apos; and numeric references are allowed"
        case XML_ERR_ENTITYREF_SEMICOL_MISSING, XML_ERR_NAME_REQUIRED:
            return "an & that starts no entity (write &amp;)"
        case XML_ERR_LT_IN_ATTRIBUTE:
            return "a < inside an attribute value (write &lt;)"
        case XML_ERR_ATTRIBUTE_NOT_STARTED, XML_ERR_ATTRIBUTE_NOT_FINISHED, XML_ERR_ATTRIBUTE_WITHOUT_VALUE:
            return "an attribute without a value in quotes"
        case XML_ERR_ATTRIBUTE_REDEFINED:
            return "an attribute given twice in one element"
        case XML_ERR_DOCUMENT_EMPTY:
            return "no element where the document starts"
        case XML_ERR_DOCUMENT_END:
            return "more after the end of the list"
        default:
            return message.isEmpty ? "not well-formed" : message
        }
    }
}
