/// Comparisons on raw UTF-8 bytes, so the parser's per-item work makes no strings it only compares or converts.
enum ASCIIBytes {
    /// Past the `>` that closes a tag or declaration, skipping quoted values; nil when nothing closes it.
    static func tagEnd<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, from start: Int) -> Int? where Bytes.Index == Int {
        var index = start
        var quote: UInt8 = 0
        // As in HTML, a quote opens a quoted value only after `=` (`<a href=http://x/">` ends at its `>`).
        var valueMayStart = false
        while index < bytes.endIndex {
            let byte = bytes[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if valueMayStart && (byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")) {
                quote = byte
                valueMayStart = false
            } else if byte == UInt8(ascii: ">") {
                return index + 1
            } else if byte == UInt8(ascii: "=") {
                valueMayStart = true
            } else if !ByteScanner.isSpace(byte) {
                valueMayStart = false
            }
            index += 1
        }
        return nil
    }

    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0, end = bytes.count
        while start < end, ByteScanner.isSpace(bytes[start]) { start += 1 }
        while end > start, ByteScanner.isSpace(bytes[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// On the trimmed bytes. In these comparisons `literal` must be lowercase.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let bytes = trimmed(bytes)
        return bytes.count == literal.utf8CodeUnitCount && hasPrefixIgnoringCase(bytes, literal)
    }

    static func hasPrefixIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard bytes.count >= length else { return false }
        let expected = literal.utf8Start
        for index in 0..<length {
            let byte = bytes[index]
            if (ByteScanner.isLetter(byte) ? byte | 0x20 : byte) != expected[index] { return false }
        }
        return true
    }

    static func hasSuffixIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard bytes.count >= length else { return false }
        return hasPrefixIgnoringCase(UnsafeBufferPointer(rebasing: bytes[(bytes.count - length)...]), literal)
    }

    /// Non-negative, surrounding whitespace allowed.
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var scanner = ByteScanner(bytes)
        scanner.skipSpaces()
        guard let number = scanner.number(maxDigits: 18), scanner.atEnd else { return nil }
        return number.value
    }

    static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
