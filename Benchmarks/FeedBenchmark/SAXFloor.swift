import CLibXML2
import FoundationEssentials
import MonsoonPodcasts

/// What libxml2 itself costs on a document: its push parser over the bytes in the slices the
/// feed parser uses, with the same options and SAX2 callbacks that do nothing. No feed parser on
/// libxml2 can be faster; the feed parser's time against this is what its own work costs.
enum SAXFloor {
    /// Parses `data` once; false when libxml2 found it not well-formed.
    static func parse(_ data: Data) -> Bool {
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { _, _, _, _, _, _, _, _, _ in }
        handler.endElementNs = { _, _, _, _ in }
        handler.characters = { _, _, _ in }
        handler.cdataBlock = handler.characters
        handler.getEntity = { _, name in SAXParser.xml.xmlGetPredefinedEntity(name) }
        handler.resolveEntity = { _, _, _ in nil }
        guard case .success = SAXParser.libxml2, let parser = SAXParser.xml.xmlCreatePushParserCtxt(&handler, nil, nil, 0, nil) else { return false }
        defer { SAXParser.xml.xmlFreeParserCtxt(parser) }
        _ = SAXParser.xml.xmlCtxtUseOptions(parser, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOENT.rawValue | XML_PARSE_IGNORE_ENC.rawValue))
        parser.pointee.charset = Int32(XML_CHAR_ENCODING_UTF8.rawValue)
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: CChar.self)
            var offset = 0
            while offset < bytes.count {
                let length = min(256 << 10, bytes.count - offset)
                if SAXParser.xml.xmlParseChunk(parser, bytes.baseAddress! + offset, Int32(length), 0) != 0 { return }
                offset += length
            }
            _ = SAXParser.xml.xmlParseChunk(parser, nil, 0, 1)
        }
        return parser.pointee.wellFormed != 0
    }
}
