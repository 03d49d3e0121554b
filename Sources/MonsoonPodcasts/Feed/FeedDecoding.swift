import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Turns a feed's bytes into clean UTF-8, so the XML parser never fails on an encoding: a UTF-8 BOM is skipped; UTF-16
/// and UTF-32 (by BOM or by the zero bytes around the first `<`) and declared encodings are transcoded (ISO-8859-1 and
/// US-ASCII as Windows-1252, as browsers do: feeds that say Latin-1 often hold curly quotes; the others through iconv);
/// a document that declares nothing and is not UTF-8 may be read as an East Asian encoding its bytes fit; otherwise
/// bytes that are not UTF-8 are read as Windows-1252 one by one (publishers paste Latin-1 into UTF-8 feeds), and
/// control characters XML forbids are dropped. An unknown declared encoding is read as UTF-8 in the same way. A
/// declared single-byte encoding whose text is valid UTF-8 with letters beyond ASCII is the usual mislabel (`BrÃ¸ndby`
/// otherwise): it is read as UTF-8, as feedparser does, and said among the repairs.
enum FeedDecoding {
    enum SourceEncoding: Equatable {
        case utf8
        case windows1252
        /// The size of a code unit, to skip a bad one.
        case iconv(String, unit: Int)
    }

    /// The UTF-8 text: the input itself from `start` (when it is clean UTF-8), or a transcoded copy.
    struct Decoded {
        var start: Int
        var transcoded: [UInt8]?
        var encoding: SourceEncoding
        /// What was done that the document does not say, for ``ParsedFeed/repairs``.
        var repair: String?
    }

    static func decode(_ input: UnsafeBufferPointer<UInt8>) -> Decoded {
        let (detected, bomLength) = detect(input)
        let body = UnsafeBufferPointer(rebasing: input[bomLength...])
        let encoding = detected ?? declaredEncoding(body)
        var transcoded: [UInt8]?
        switch encoding {
        case .utf8:
            guard !isCleanUTF8(body) else { return Decoded(start: bomLength, transcoded: nil, encoding: .utf8) }
            // Neither a BOM nor a declaration says UTF-8: it may be Big5, GB18030, EUC-JP, Shift_JIS or EUC-KR.
            if detected == nil, declaredEncodingName(body) == nil, let name = eastAsianEncoding(body),
               let text = iconvToUTF8(body, from: name, unit: 1) {
                return Decoded(start: 0, transcoded: text, encoding: .iconv(name, unit: 1))
            }
            return Decoded(start: bomLength, transcoded: repairUTF8(body), encoding: .utf8)
        case .windows1252:
            if let mislabel = mislabelledUTF8(body, declared: declaredEncodingName(body), iconvName: nil, start: bomLength) { return mislabel }
            transcoded = windows1252ToUTF8(body)
        case .iconv(let name, let unit):
            if detected == nil, let mislabel = mislabelledUTF8(body, declared: declaredEncodingName(body), iconvName: name, start: bomLength) { return mislabel }
            transcoded = iconvToUTF8(body, from: name, unit: unit)
            if transcoded == nil {
                // iconv does not know the name: read it as (repaired) UTF-8.
                if !isCleanUTF8(body) { transcoded = repairUTF8(body) }
                return Decoded(start: bomLength, transcoded: transcoded, encoding: .utf8)
            }
        }
        return Decoded(start: 0, transcoded: transcoded, encoding: encoding)
    }

    /// Read as UTF-8 when the body is clean UTF-8 beyond ASCII and the declared encoding is single-byte: Windows-1252
    /// (`iconvName` nil), or one iconv turns into as many characters as there are bytes.
    private static func mislabelledUTF8(_ body: UnsafeBufferPointer<UInt8>, declared: String?, iconvName: String?, start: Int) -> Decoded? {
        guard let declared, body.contains(where: { $0 >= 0x80 }), isCleanUTF8(body) else { return nil }
        if let iconvName {
            guard let text = iconvToUTF8(body, from: iconvName, unit: 1),
                  String(decoding: text, as: UTF8.self).unicodeScalars.count == body.count else { return nil }
        }
        return Decoded(start: start, transcoded: nil, encoding: .utf8,
                       repair: "the feed declares the encoding \"\(declared)\" but is written in UTF-8; it was read as UTF-8")
    }

    /// By a byte order mark or by the zero bytes of UTF-16/32 text (XML starts with `<` or whitespace, both ASCII), and
    /// the length of the BOM.
    static func detect(_ bytes: UnsafeBufferPointer<UInt8>) -> (SourceEncoding?, Int) {
        let b = Array(bytes.prefix(4)) + [UInt8](repeating: 0xAA, count: max(0, 4 - bytes.count))
        switch (b[0], b[1], b[2], b[3]) {
        case (0xEF, 0xBB, 0xBF, _): return (.utf8, 3)
        case (0x00, 0x00, 0xFE, 0xFF): return (.iconv("UTF-32BE", unit: 4), 4)
        case (0xFF, 0xFE, 0x00, 0x00): return (.iconv("UTF-32LE", unit: 4), 4)
        case (0xFE, 0xFF, _, _): return (.iconv("UTF-16BE", unit: 2), 2)
        case (0xFF, 0xFE, _, _): return (.iconv("UTF-16LE", unit: 2), 2)
        case (0x00, 0x00, 0x00, let x) where x != 0: return (.iconv("UTF-32BE", unit: 4), 0)
        case (let x, 0x00, 0x00, 0x00) where x != 0: return (.iconv("UTF-32LE", unit: 4), 0)
        case (0x00, let x, 0x00, let y) where x != 0 && y != 0: return (.iconv("UTF-16BE", unit: 2), 0)
        case (let x, 0x00, let y, 0x00) where x != 0 && y != 0: return (.iconv("UTF-16LE", unit: 2), 0)
        default: return (nil, 0)
        }
    }

    /// Looked for in the first kilobyte: the declaration may follow whitespace or, wrongly, a comment.
    static func declaredEncoding(_ bytes: UnsafeBufferPointer<UInt8>) -> SourceEncoding {
        guard let name = declaredEncodingName(bytes) else { return .utf8 }
        // `windows_1252` as Python spells it: glibc's iconv knows only the hyphen.
        let key = name.lowercased().replacing("_", with: "-")
        switch key {
        case "utf-8", "utf8", "unicode-1-1-utf-8":
            return .utf8
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "windows-1252", "cp1252", "x-cp1252",
             "us-ascii", "ascii", "iso-ir-100", "ibm819", "cp819":
            return .windows1252
        case let other where other.hasPrefix("utf-16") || other.hasPrefix("utf-32") || other.hasPrefix("ucs") || other == "unicode":
            // Said to be 16- or 32-bit, but the declaration was readable as ASCII: it is not.
            return .utf8
        default:
            return .iconv(iconvAliases[key] ?? key, unit: 1)
        }
    }

    /// Names of legacy code pages Python knows and glibc's iconv knows by another.
    private static let iconvAliases = ["cp-is": "CP861", "csibm861": "CP861", "maccentraleurope": "MAC-CENTRALEUROPE",
                                       "maclatin2": "MAC-CENTRALEUROPE", "maciceland": "MAC-IS", "macroman": "MACINTOSH"]

    static func declaredEncodingName(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let head = bytes.prefix(1024)
        guard let declaration = ByteScanner.firstRange(of: "<?xml", in: head) else { return nil }
        let rest = head[declaration.upperBound...]
        let end = ByteScanner.firstRange(of: "?>", in: rest)?.lowerBound ?? rest.endIndex
        let inside = rest[..<end]
        guard let key = ByteScanner.firstRange(of: "encoding", in: inside) else { return nil }
        var index = key.upperBound
        while index < end, ByteScanner.isSpace(bytes[index]) || bytes[index] == UInt8(ascii: "=") { index += 1 }
        guard index < end, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else { return nil }
        let quote = bytes[index]
        let valueStart = index + 1
        guard let valueEnd = bytes[valueStart..<end].firstIndex(of: quote), valueEnd > valueStart, valueEnd - valueStart < 64 else { return nil }
        return String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self)
    }

    /// 32 bytes at a time while they are ASCII: large feeds are mostly that. Control characters XML forbids are not looked
    /// for: they are rare, libxml2 finds them, and ``FeedParser`` then repairs and parses again.
    static func isCleanUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        var index = 0
        while index < count {
            if index + 32 <= count {
                let words = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    | raw.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
                    | raw.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)
                    | raw.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)
                if words & 0x8080_8080_8080_8080 == 0 {
                    index += 32
                    continue
                }
            }
            if base[index] < 0x80 {
                index += 1
            } else {
                let length = sequenceLength(base, at: index, count: count)
                if length == 0 { return false }
                index += length
            }
        }
        return true
    }

    /// 2 to 4, or 0 when it is not one.
    @inline(__always)
    static func sequenceLength(_ base: UnsafePointer<UInt8>, at index: Int, count: Int) -> Int {
        let lead = base[index]
        func continuation(_ offset: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
            index + offset < count && base[index + offset] >= low && base[index + offset] <= high
        }
        switch lead {
        case 0xC2...0xDF: return continuation(1) ? 2 : 0
        case 0xE0: return continuation(1, 0xA0) && continuation(2) ? 3 : 0
        case 0xED: return continuation(1, 0x80, 0x9F) && continuation(2) ? 3 : 0
        case 0xE1...0xEF:
            guard continuation(1), continuation(2) else { return 0 }
            // U+FFFE and U+FFFF are not XML characters.
            if lead == 0xEF, base[index + 1] == 0xBF, base[index + 2] >= 0xBE { return 0 }
            return 3
        case 0xF0: return continuation(1, 0x90) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF1...0xF3: return continuation(1) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF4: return continuation(1, 0x80, 0x8F) && continuation(2) && continuation(3) ? 4 : 0
        default: return 0
        }
    }

    /// Valid sequences kept, other bytes read as Windows-1252, forbidden control characters dropped.
    static func repairUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 16 + 16)
        guard let base = bytes.baseAddress else { return output }
        let count = bytes.count
        var index = 0
        while index < count {
            let byte = base[index]
            if byte < 0x80 {
                if byte >= 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { output.append(byte) }
                index += 1
                continue
            }
            let length = sequenceLength(base, at: index, count: count)
            if length > 0 {
                output.append(contentsOf: UnsafeBufferPointer(start: base + index, count: length))
                index += length
            } else {
                appendUTF8(windows1252(byte), to: &output)
                index += 1
            }
        }
        return output
    }

    static func windows1252ToUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 8 + 16)
        for byte in bytes {
            if byte < 0x80 { output.append(byte) } else { appendUTF8(windows1252(byte), to: &output) }
        }
        return output
    }

    /// The five bytes Windows-1252 leaves undefined map to C1 controls.
    static func windows1252(_ byte: UInt8) -> UInt32 {
        guard byte >= 0x80, byte < 0xA0 else { return UInt32(byte) }
        return cp1252High[Int(byte - 0x80)]
    }

    private static let cp1252High: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ]

    static func appendUTF8(_ value: UInt32, to output: inout [UInt8]) {
        switch value {
        case 0..<0x80:
            output.append(UInt8(value))
        case 0x80..<0x800:
            output.append(UInt8(0xC0 | value >> 6))
            output.append(UInt8(0x80 | value & 0x3F))
        case 0x800..<0x10000:
            output.append(UInt8(0xE0 | value >> 12))
            output.append(UInt8(0x80 | value >> 6 & 0x3F))
            output.append(UInt8(0x80 | value & 0x3F))
        default:
            output.append(UInt8(0xF0 | value >> 18))
            output.append(UInt8(0x80 | value >> 12 & 0x3F))
            output.append(UInt8(0x80 | value >> 6 & 0x3F))
            output.append(UInt8(0x80 | value & 0x3F))
        }
    }

    /// A code unit iconv cannot convert becomes U+FFFD; nil when neither iconv nor ``macToUTF8`` knows the encoding.
    static func iconvToUTF8(_ bytes: UnsafeBufferPointer<UInt8>, from name: String, unit: Int) -> [UInt8]? {
        let descriptor = iconv_open("UTF-8", name)
        guard let descriptor, descriptor != iconv_t(bitPattern: -1) else { return unit == 1 ? macToUTF8(bytes, from: name) : nil }
        defer { iconv_close(descriptor) }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return [] }
        var output = [UInt8](repeating: 0, count: bytes.count * 2 + 64)
        var produced = 0
        var input = UnsafeMutablePointer(mutating: UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self))
        var inputLeft = bytes.count
        while inputLeft > 0 {
            if output.count - produced < 16 { output.append(contentsOf: [UInt8](repeating: 0, count: output.count)) }
            let (result, written, failure) = output.withUnsafeMutableBufferPointer { buffer -> (Int, Int, Int32) in
                var target: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(buffer.baseAddress! + produced)
                    .assumingMemoryBound(to: CChar.self)
                var targetLeft = buffer.count - produced
                let before = targetLeft
                var source: UnsafeMutablePointer<CChar>? = input
                let result = iconv(descriptor, &source, &inputLeft, &target, &targetLeft)
                let failure = result == -1 ? errno : 0
                if let source { input = source }
                return (result, before - targetLeft, failure)
            }
            produced += written
            guard result == -1 else { continue }
            switch failure {
            case E2BIG:
                output.append(contentsOf: [UInt8](repeating: 0, count: output.count))
            case EILSEQ:
                // A code unit that is not valid in the source encoding: U+FFFD, then go on.
                let skip = min(unit, inputLeft)
                input += skip
                inputLeft -= skip
                if output.count - produced < 3 { output.append(contentsOf: [UInt8](repeating: 0, count: output.count)) }
                output[produced] = 0xEF; output[produced + 1] = 0xBF; output[produced + 2] = 0xBD
                produced += 3
            default:
                // EINVAL: a truncated sequence at the end.
                inputLeft = 0
            }
        }
        output.removeSubrange(produced...)
        return output
    }
}
