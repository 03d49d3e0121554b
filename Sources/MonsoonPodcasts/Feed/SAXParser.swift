import CLibXML2

/// libxml2's push parser driven over UTF-8 bytes, its SAX2 callbacks going to a ``FeedBuilder``.
///
/// Not Foundation's `XMLParser`: on the benchmark's 12 MB, 5,000-item feed, it takes 100–150 ms with delegate methods
/// that do nothing (a `String` for every name and text run, a dictionary for every element's attributes); libxml2's
/// SAX2 takes about 30 ms, and the whole of ``FeedParser`` 45–55 ms (podcastparser: 800–1,000 ms).
///
/// Security: the document never carries a DTD here (``FeedRepair`` blanks it), the only entities resolved are XML's
/// five, no external entity is ever loaded (`XML_PARSE_NONET`), and without `XML_PARSE_HUGE` libxml2's own limits on
/// text size and nesting stay in force.
package enum SAXParser {
    package struct Failure: Error {
        var message: String
        var line: Int
        var column: Int
        /// `xmlParserErrors`.
        var code: Int
    }

    /// libxml2's functions, opened once, before any thread parses (libxml2 requires its initialisation for
    /// threads); the reason when it cannot be opened.
    package static let libxml2: Result<monsoon_libxml2, Failure> = {
        let functions = UnsafeMutablePointer<monsoon_libxml2>.allocate(capacity: 1)
        defer { functions.deallocate() }
        if let reason = monsoon_libxml2_open(functions) {
            return .failure(Failure(message: "cannot open libxml2, which reads XML: \(String(cString: reason)); install it: apt-get install libxml2",
                                    line: 0, column: 0, code: -1))
        }
        return .success(functions.pointee)
    }()

    /// libxml2's functions; only called once `withParser` has made a parser (so libxml2 is open).
    package static var xml: monsoon_libxml2 {
        guard case .success(let functions) = libxml2 else { preconditionFailure("libxml2 used before a parser was made") }
        return functions
    }

    /// A push parser set up as every document here is read (``FeedParser``'s and ``OPMLParser``'s alike); the
    /// failure when libxml2 cannot be opened or cannot make one.
    static func withParser<T>(_ handler: inout xmlSAXHandler, user: UnsafeMutableRawPointer,
                              _ body: (xmlParserCtxtPtr) -> T) -> Result<T, Failure> {
        let xml: monsoon_libxml2
        switch libxml2 {
        case .success(let functions): xml = functions
        case .failure(let failure): return .failure(failure)
        }
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        // Only XML's predefined entities: nothing a document declares is ever expanded by libxml2.
        handler.getEntity = { _, name in SAXParser.xml.xmlGetPredefinedEntity(name) }
        handler.resolveEntity = { _, _, _ in nil }
        guard let parser = xml.xmlCreatePushParserCtxt(&handler, user, nil, 0, nil) else {
            return .failure(Failure(message: "libxml2 could not create a parser (out of memory?)", line: 0, column: 0, code: -1))
        }
        defer {
            // libxml2 builds a document only for DTD declarations it meets; there is none, but be tidy.
            if let document = parser.pointee.myDoc { xml.xmlFreeDoc(document) }
            xml.xmlFreeParserCtxt(parser)
        }
        // NOENT only makes `&amp;` in attribute values come out as `&` (not `&#38;`): getEntity knows no other entity.
        _ = xml.xmlCtxtUseOptions(parser, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOENT.rawValue | XML_PARSE_IGNORE_ENC.rawValue))
        // The text is UTF-8 already (FeedDecoding). Told so, libxml2 2.9 does not guess the encoding from the first four
        // bytes: text after a BOM starting `<` NUL NUL NUL was switched to UCS-4, and the failure printed on stderr.
        // (What `xmlSwitchEncoding(parser, XML_CHAR_ENCODING_UTF8)` does, which parser.h does not declare.)
        parser.pointee.charset = Int32(XML_CHAR_ENCODING_UTF8.rawValue)
        return .success(body(parser))
    }

    /// The first fatal error, or nil when the document is well-formed (or the builder stopped it on purpose).
    static func parse(_ text: RepairedText, into builder: FeedBuilder) -> Failure? {
        var handler = xmlSAXHandler()
        handler.startElementNs = { context, localname, prefix, uri, _, _, attributeCount, _, attributes in
            guard let context, let localname else { return }
            FeedBuilder.with(context) { $0.startElement(localname, prefix, uri, Int(attributeCount), attributes) }
        }
        handler.endElementNs = { context, localname, prefix, _ in
            guard let context, let localname else { return }
            FeedBuilder.with(context) { $0.endElement(localname, prefix) }
        }
        handler.characters = { context, characters, length in
            guard let context, let characters else { return }
            FeedBuilder.with(context) { $0.characters(characters, Int(length)) }
        }
        handler.cdataBlock = handler.characters
        handler.processingInstruction = { context, target, data in
            guard let context, let target else { return }
            FeedBuilder.with(context) { $0.processingInstruction(target, data) }
        }
        handler.serror = { context, error in
            guard let context, let error else { return }
            FeedBuilder.with(context) { $0.recordError(error.pointee) }
        }
        let parsed = withParser(&handler, user: Unmanaged.passUnretained(builder).toOpaque()) { parser -> Failure? in
            builder.parser = parser
            defer { builder.parser = nil }
            // In slices: one call with more than 10,000,000 bytes trips libxml2's lookup limit, and 256 KB stays in cache.
            text.forEachChunk(size: 256 << 10) { chunk in
                guard !builder.stopped else { return false }
                return chunk.withMemoryRebound(to: CChar.self) { chars in
                    SAXParser.xml.xmlParseChunk(parser, chars.baseAddress, Int32(chars.count), 0) == 0
                }
            }
            if !builder.stopped { _ = SAXParser.xml.xmlParseChunk(parser, nil, 0, 1) }
            if builder.stopped || parser.pointee.wellFormed != 0 { return nil }
            return builder.firstError ?? Failure(message: "the document is not well-formed", line: Int(parser.pointee.input?.pointee.line ?? 0),
                                                 column: Int(parser.pointee.input?.pointee.col ?? 0), code: Int(parser.pointee.errNo))
        }
        switch parsed {
        case .success(let failure): return failure
        case .failure(let failure): return failure
        }
    }
}
