#if canImport(Glibc)
import Glibc
#endif

/// Finds an element with more attributes than a document may give one, before libxml2 reads it.
///
/// libxml2 (2.9) checks each attribute against all those before it before the SAX callback hears of the element: an
/// `<enclosure>` with 400,000 attributes (4.5 MB) took 48 s of CPU, and no setting of libxml2's bounds it. So the bytes
/// are looked at first: a start tag with more than `limit` attributes is longer than `limit` times five bytes (` a=""`
/// the shortest) and holds no `<`, so only a `<` with no other `<` for that many bytes after it can start one. Those
/// are found by jumping ahead that far and looking back for a `<` (a feed's markup is dense; long text is crossed with
/// `memchr`), and only they are counted, attribute by attribute.
///
/// A `<` inside a comment or a CDATA section counts too: telling them apart would cost a pass over every byte, and no
/// real document holds such a tag there either.
enum AttributeScan {
    /// Where the first start tag with more than `limit` attributes begins (its `<`), or nil.
    static func crowdedElement(in bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> Int? {
        guard let base = bytes.baseAddress, let first = memchr(base, Int32(UInt8(ascii: "<")), bytes.count) else { return nil }
        let count = bytes.count
        // Past this many bytes from its `<`, a start tag holds more than `limit` attributes.
        let reach = limit < count / 5 ? 5 * limit + 2 : count
        var start = base.distance(to: first.assumingMemoryBound(to: UInt8.self))
        while true {
            // Invariant: `start` is a `<`, and no tag before it can be crowded.
            let end = count - start > reach ? start + reach : count
            var back = end - 1
            while back > start, bytes[back] != UInt8(ascii: "<") { back -= 1 }
            if back > start {
                start = back
                continue
            }
            if attributes(in: bytes, at: start, upTo: limit) > limit { return start }
            guard end < count, let next = memchr(base + end, Int32(UInt8(ascii: "<")), count - end) else { return nil }
            start = base.distance(to: next.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// The attributes of the start tag at `start` (a `<`) as libxml2 reads them, counted up to one
    /// more than `limit`: each a name, `=` and a quoted value. The count stops where the tag ends,
    /// or breaks (libxml2 stops there too); an end tag, a comment or a declaration has none.
    static func attributes(in bytes: UnsafeBufferPointer<UInt8>, at start: Int, upTo limit: Int) -> Int {
        let count = bytes.count
        var index = start + 1
        func skip(while condition: (UInt8) -> Bool) {
            while index < count, condition(bytes[index]) { index += 1 }
        }
        guard index < count, isNameStart(bytes[index]) else { return 0 }
        skip { !endsName($0) }
        var attributes = 0
        while attributes <= limit {
            skip(while: ByteScanner.isSpace)
            guard index < count, isNameStart(bytes[index]) else { break }
            skip { !endsName($0) && $0 != UInt8(ascii: "=") }
            skip(while: ByteScanner.isSpace)
            guard index < count, bytes[index] == UInt8(ascii: "=") else { break }
            index += 1
            skip(while: ByteScanner.isSpace)
            guard index + 1 < count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'"),
                  let close = memchr(bytes.baseAddress! + index + 1, Int32(bytes[index]), count - index - 1) else { break }
            attributes += 1
            index = bytes.baseAddress!.distance(to: close.assumingMemoryBound(to: UInt8.self)) + 1
        }
        return attributes
    }

    /// The line (from 1) of the byte at `offset`, and the name of the element whose tag starts there
    /// (for messages: at most 64 bytes of it, nil when that is not plain text).
    static func describe(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> (line: Int, name: String?) {
        var line = 1
        var position = 0
        while position < offset, let found = memchr(bytes.baseAddress! + position, 0x0A, offset - position) {
            line += 1
            position = bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
        }
        var end = offset + 1
        while end < bytes.count, end - offset <= 64, !endsName(bytes[end]) { end += 1 }
        let name = bytes[offset + 1..<end]
        let plain = !name.isEmpty && end - offset <= 64 && name.allSatisfy { $0 > 0x20 && $0 < 0x7F }
        return (line, plain ? String(decoding: name, as: UTF8.self) : nil)
    }

    /// A byte that can start an XML name: a letter, `_`, `:`, or part of a character beyond ASCII.
    private static func isNameStart(_ byte: UInt8) -> Bool {
        ByteScanner.isLetter(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
    }

    /// A byte that ends a name in a tag.
    private static func endsName(_ byte: UInt8) -> Bool {
        ByteScanner.isSpace(byte) || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "<")
            || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
    }
}
