import CLibc
import FoundationEssentials
import Glibc

/// Text helpers FoundationEssentials leaves out, each with the rule of the Foundation call it replaces.
extension StringProtocol {
    /// Without the spaces and tabs at either end (Unicode's horizontal white space, as Foundation's
    /// `.whitespaces`); line breaks are kept.
    package func trimmingBlanks() -> String {
        trimming { $0.isFoundationWhitespace && !$0.isLineBreak }
    }

    /// Without white space or line breaks at either end (Foundation's `.whitespacesAndNewlines`).
    package func trimmingWhitespace() -> String {
        trimming { $0.isFoundationWhitespace }
    }

    /// Without the characters `drop` says yes to at either end.
    package func trimming(_ drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }), let last = scalars.lastIndex(where: { !drop($0) }) else { return "" }
        return String(self[first...last])
    }

}

extension String {
    /// In single quotes for a shell: a command with it can be pasted whatever it holds.
    public var shellQuoted: String { "'" + replacing("'", with: "'\\''") + "'" }

    /// Space-padded at the end to `width` characters (never cut: a longer text is kept whole).
    package func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    /// `format` filled in by the C library's printf (numbers only: `%.1f`, `%04X`): the digits
    /// Foundation's `String(format:)` gave, without Foundation. Neither `*` widths nor `n$`
    /// positions are read; a missing argument is 0.
    ///
    /// Each conversion is printed on its own, its argument passed as the C type the conversion
    /// reads: `withVaList` asks the runtime of each argument whether it is floating point, a search
    /// through every conformance in the program the first time each type is asked about (a third
    /// of a millisecond of a `get`'s start-up).
    package init(cFormat format: String, _ arguments: any CVarArg...) {
        let bytes = Array(format.utf8)
        var printed = ""
        var (start, index, argument) = (0, 0, 0)
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "%") else {
                index += 1
                continue
            }
            var end = index + 1
            if end < bytes.count && bytes[end] == UInt8(ascii: "%") {   // a literal %, printed with its piece
                index = end + 1
                continue
            }
            while end < bytes.count && !Self.conversions.contains(bytes[end]) { end += 1 }
            guard end < bytes.count else { break }
            let value = argument < arguments.count ? arguments[argument] : nil
            printed += Self.printed(bytes[start...end], Self.floatingConversions.contains(bytes[end]) ? .double(value) : .long(value))
            argument += 1
            (start, index) = (end + 1, end + 1)
        }
        if start < bytes.count || printed.isEmpty { printed += Self.printed(bytes[start...], .long(nil)) }
        self = printed
    }

    /// printf's conversion characters: each ends a conversion and takes one argument.
    private static let conversions = Set("diouxXeEfFgGaAcspn".utf8)
    private static let floatingConversions = Set("eEfFgGaA".utf8)

    /// A conversion's argument, as the C type it reads.
    private enum CArgument {
        case double((any CVarArg)?)
        case long((any CVarArg)?)
    }

    /// `format`, with at most one conversion, printed with `argument`: an integer given for a floating
    /// conversion is converted; a floating value given for an integer one is passed as the word
    /// `withVaList` would pass (what C prints then is its own).
    private static func printed(_ format: ArraySlice<UInt8>, _ argument: CArgument) -> String {
        let format = String(decoding: format, as: UTF8.self)
        func print(into buffer: UnsafeMutablePointer<CChar>?, size: Int) -> Int {
            switch argument {
            case .double(let value as Double): Int(monsoon_format_double(buffer, size, format, value))
            case .double(let value as Float): Int(monsoon_format_double(buffer, size, format, Double(value)))
            // An integer for a floating conversion (none in Monsoon): the cast costs the search, but only here.
            case .double(let value): Int(monsoon_format_double(buffer, size, format, (value as? any BinaryInteger).map { Double($0) } ?? 0))
            case .long(let value): Int(monsoon_format_long(buffer, size, format, value?._cVarArgEncoding.first ?? 0))
            }
        }
        var buffer = [CChar](repeating: 0, count: 64)
        let needed = print(into: &buffer, size: buffer.count)
        if needed >= buffer.count {
            buffer = [CChar](repeating: 0, count: needed + 1)
            _ = print(into: &buffer, size: buffer.count)   // the count is known now
        }
        return String(decoding: buffer[..<Swift.max(0, Swift.min(needed, buffer.count - 1))].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// True when the two are equal but for the case of ASCII letters (HTTP's header names).
    package func equalsIgnoringASCIICase(_ other: String) -> Bool {
        utf8.count == other.utf8.count && zip(utf8, other.utf8).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (0x61...0x7A).contains(a | 0x20))
        }
    }

    /// Each `%XX` as the byte it stands for; nil when a `%` is not followed by two hex digits or
    /// the bytes are not UTF-8 (as Foundation's `removingPercentEncoding`).
    package var percentDecoded: String? {
        guard contains("%") else { return self }
        return percentDecodedBytes.flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// Each `%XX` as the byte it stands for, whatever the bytes make; nil when a `%` is not
    /// followed by two hex digits.
    package var percentDecodedBytes: [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// Every byte but ASCII letters, digits and those in `allowed` as `%XX` (upper-case hex).
    package func percentEncoded(allowing allowed: String) -> String {
        let kept = Set(allowed.utf8)
        var result = ""
        result.reserveCapacity(utf8.count)
        for byte in utf8 {
            let alphanumeric = (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A)
            if alphanumeric || kept.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return result
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Unicode.Scalar {
    /// Unicode's white space and the zero width space, which Foundation's sets hold too (it was a
    /// space before Unicode 4.0.1): a title trimmed to a file name keeps the name it had.
    fileprivate var isFoundationWhitespace: Bool {
        properties.isWhitespace || value == 0x200B
    }

    /// Line feed, vertical tab, form feed, carriage return, next line, and the line and paragraph separators.
    fileprivate var isLineBreak: Bool {
        (0x0A...0x0D).contains(value) || value == 0x85 || value == 0x2028 || value == 0x2029
    }
}
