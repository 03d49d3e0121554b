import FoundationEssentials

/// Dates as feeds write them, parsed and formatted by hand: `DateFormatter` is about a thousand times
/// slower, and a feed of a long-running show has thousands of dates.
public enum FeedDate {
    /// RFC 822 and its real-world variants (``RFC822Date``), or ISO 8601 (``ISO8601Date``); nil when not understood.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// On the parser's text buffers.
    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var scanner = ByteScanner(bytes)
        scanner.skipSpaces()
        guard !scanner.atEnd else { return nil }
        // ISO 8601 starts with a four-digit year and a dash; RFC 822 with a weekday or a one- or two-digit day.
        if scanner.looksLikeISODate {
            return ISO8601Date.parse(&scanner)
        }
        return RFC822Date.parse(&scanner)
    }

    /// `2024-01-31T12:00:00Z`, for JSON and logs.
    public static func iso8601String(_ date: Date) -> String {
        let total = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = Int(total - days * 86_400)
        let (year, month, day) = civil(fromDays: days)
        var bytes = [UInt8](repeating: 0, count: 20)
        func put(_ value: Int, _ at: Int, _ width: Int) {
            var value = value
            for index in stride(from: at + width - 1, through: at, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(Int(max(0, min(9999, year))), 0, 4)
        bytes[4] = UInt8(ascii: "-"); put(month, 5, 2)
        bytes[7] = UInt8(ascii: "-"); put(day, 8, 2)
        bytes[10] = UInt8(ascii: "T"); put(secondOfDay / 3600, 11, 2)
        bytes[13] = UInt8(ascii: ":"); put(secondOfDay / 60 % 60, 14, 2)
        bytes[16] = UInt8(ascii: ":"); put(secondOfDay % 60, 17, 2)
        bytes[19] = UInt8(ascii: "Z")
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Nil when a field is out of range (day 32, hour 25, February 30 …). `offset`: seconds east of UTC.
    static func timestamp(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offset: Int) -> Date? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
              (1...9999).contains(year) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59)) - Int64(offset)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days-from-civil and its inverse: exact for the proleptic Gregorian calendar.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// A cursor over ASCII bytes, for the hand-written date and duration parsers (and the feed
/// parser's byte searches, `firstRange(of:in:)`).
struct ByteScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    /// Trailing whitespace is the end.
    let end: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        var end = bytes.count
        while end > 0, ByteScanner.isSpace(bytes[end - 1]) { end -= 1 }
        self.end = end
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }
    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) &- 0x61 < 26 }

    /// Where `needle` first occurs in `bytes` (indices of the whole buffer), byte for byte. The
    /// standard library's `firstRange(of:)` goes through generic collection indices: about a
    /// hundred thousand instructions to look through the head of a feed.
    static func firstRange(of needle: StaticString, in bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Range<Int>? {
        needle.withUTF8Buffer { needle in
            guard let first = needle.first, needle.count <= bytes.count else { return nil }
            for start in bytes.startIndex...(bytes.endIndex - needle.count)
            where bytes[start] == first && bytes[start..<(start + needle.count)].elementsEqual(needle) {
                return start..<(start + needle.count)
            }
            return nil
        }
    }

    var atEnd: Bool { position >= end }
    var current: UInt8? { position < end ? bytes[position] : nil }

    func peek(_ offset: Int) -> UInt8? {
        position + offset < end ? bytes[position + offset] : nil
    }

    mutating func skipSpaces() {
        while position < end, ByteScanner.isSpace(bytes[position]) { position += 1 }
    }

    mutating func skip(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        position += 1
        return true
    }

    /// At least one.
    mutating func number(maxDigits: Int = 9) -> (value: Int, digits: Int)? {
        var value = 0
        var digits = 0
        while digits < maxDigits, let byte = current, ByteScanner.isDigit(byte) {
            value = value * 10 + Int(byte - 0x30)
            digits += 1
            position += 1
        }
        return digits == 0 ? nil : (value, digits)
    }

    /// Lowercased, packed into an integer (first 8 letters), with its length.
    mutating func word() -> (packed: UInt64, length: Int) {
        var packed: UInt64 = 0
        var length = 0
        while let byte = current, ByteScanner.isLetter(byte) {
            if length < 8 { packed = packed << 8 | UInt64(byte | 0x20) }
            length += 1
            position += 1
        }
        return (packed, length)
    }

    var looksLikeISODate: Bool {
        guard position + 4 < end else { return false }
        for offset in 0..<4 where !ByteScanner.isDigit(bytes[position + offset]) { return false }
        return bytes[position + 4] == UInt8(ascii: "-")
    }
}

/// Packs a lowercase ASCII word as ``ByteScanner/word()`` does.
func packedWord(_ word: StaticString) -> UInt64 {
    var packed: UInt64 = 0
    word.withUTF8Buffer { buffer in
        for byte in buffer.prefix(8) { packed = packed << 8 | UInt64(byte) }
    }
    return packed
}
