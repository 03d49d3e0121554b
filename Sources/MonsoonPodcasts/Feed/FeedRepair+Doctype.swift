/// Reading the DOCTYPE, which ``FeedRepair`` removes: only the general entities its internal subset declares are kept
/// (literal values, or a mark for external ones, which are never resolved).
extension FeedRepair {
    /// Records the entity declarations; returns the index past it (the end of the input when it is not closed).
    static func parseDoctype(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, into entities: inout [String: Entity]) -> Int {
        var index = start + 9
        var quote: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                index = parseInternalSubset(bytes, from: index + 1, into: &entities)
                continue
            } else if byte == UInt8(ascii: ">") {
                return index + 1
            }
            index += 1
        }
        return bytes.count
    }

    private static func parseInternalSubset(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, into entities: inout [String: Entity]) -> Int {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "]") {
                return index + 1
            } else if matches(bytes, "<!--", at: index, ignoringCase: false) {
                index = find(bytes, "-->", from: index + 4).map { $0 + 3 } ?? bytes.count
            } else if matches(bytes, "<?", at: index, ignoringCase: false) {
                index = find(bytes, "?>", from: index + 2).map { $0 + 2 } ?? bytes.count
            } else if matches(bytes, "<!entity", at: index, ignoringCase: true) {
                index = parseEntityDeclaration(bytes, from: index + 8, into: &entities)
            } else if byte == UInt8(ascii: "<") {
                index = declarationEnd(bytes, from: index + 1)
            } else {
                index += 1
            }
        }
        return bytes.count
    }

    /// `<!ENTITY name "value">`, `<!ENTITY name SYSTEM "uri">`, `<!ENTITY % name …>` (skipped). The first declaration
    /// of a name binds, as in XML.
    private static func parseEntityDeclaration(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, into entities: inout [String: Entity]) -> Int {
        var index = start
        func skipSpaces() { while index < bytes.count, ByteScanner.isSpace(bytes[index]) { index += 1 } }
        skipSpaces()
        guard index < bytes.count, bytes[index] != UInt8(ascii: "%") else { return declarationEnd(bytes, from: index) }
        let nameStart = index
        while index < bytes.count, isNameByte(bytes[index], first: index == nameStart) { index += 1 }
        guard index > nameStart else { return declarationEnd(bytes, from: index) }
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
        skipSpaces()
        guard index < bytes.count else { return bytes.count }
        let quote = bytes[index]
        if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
            let valueStart = index + 1
            var valueEnd = valueStart
            while valueEnd < bytes.count, bytes[valueEnd] != quote { valueEnd += 1 }
            if entities[name] == nil { entities[name] = .value(Array(bytes[valueStart..<min(valueEnd, bytes.count)])) }
            index = valueEnd + 1
        } else if entities[name] == nil {
            entities[name] = .external
        }
        return declarationEnd(bytes, from: index)
    }

    /// Skipping quoted strings; the end of the input when nothing closes it.
    private static func declarationEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        ASCIIBytes.tagEnd(bytes, from: start) ?? bytes.count
    }
}
