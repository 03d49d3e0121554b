import FoundationEssentials

/// RFC 822 / 2822 dates as feeds really write them: `Tue, 02 Jan 2024 10:00:00 +0000` and its variants: a one-digit
/// day, no weekday, a full or foreign or wrong weekday (ignored), no comma or space after it, full month names, missing
/// seconds or time (midnight), fractional seconds (dropped), two-digit years (00–49 → 20xx), offsets (`+0100`,
/// `+01:00`, `+01`), named zones (an unknown name counts as UTC), military letters, `GMT+0100`, and no zone (UTC).
enum RFC822Date {
    static func parse(_ text: String) -> Date? { FeedDate.parse(text) }

    static func parse(_ scanner: inout ByteScanner) -> Date? {
        // Weekday: any word followed by a comma, or an English weekday name without one.
        if let first = scanner.current, ByteScanner.isLetter(first) {
            let word = scanner.word()
            scanner.skipSpaces()
            if !scanner.skip(UInt8(ascii: ",")) && !isWeekday(word) { return nil }
            scanner.skipSpaces()
        }
        guard let day = scanner.number(maxDigits: 2) else { return nil }
        skipSeparators(&scanner)
        let monthStart = scanner.position
        let monthWord = scanner.word()
        guard monthWord.length >= 3, let month = month(scanner.bytes, at: monthStart) else { return nil }
        skipSeparators(&scanner)
        guard let yearNumber = scanner.number(maxDigits: 4) else { return nil }
        var year = yearNumber.value
        switch yearNumber.digits {
        case 4: break
        case 2: year += year < 50 ? 2000 : 1900
        case 3: year += 1900
        default: return nil
        }
        scanner.skipSpaces()
        var hour = 0, minute = 0, second = 0
        if let first = scanner.current, ByteScanner.isDigit(first) {
            guard let h = scanner.number(maxDigits: 2), scanner.skip(UInt8(ascii: ":")),
                  let m = scanner.number(maxDigits: 2), m.digits == 2 else { return nil }
            hour = h.value
            minute = m.value
            if scanner.skip(UInt8(ascii: ":")) {
                guard let s = scanner.number(maxDigits: 2) else { return nil }
                second = s.value
                if scanner.skip(UInt8(ascii: ".")) || scanner.skip(UInt8(ascii: ",")) { _ = scanner.number() }
            }
            scanner.skipSpaces()
        }
        guard let offset = zoneOffset(&scanner) else { return nil }
        return FeedDate.timestamp(year: year, month: month, day: day.value, hour: hour, minute: minute, second: second, offset: offset)
    }

    private static func skipSeparators(_ scanner: inout ByteScanner) {
        while let byte = scanner.current, ByteScanner.isSpace(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "/") {
            scanner.position += 1
        }
    }

    private static let weekdays: [UInt64] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun", "monday", "tuesday", "wednesda",
                                             "thursday", "friday", "saturday", "sunday", "tues", "thur", "thurs"].map(packedWord)

    private static func isWeekday(_ word: (packed: UInt64, length: Int)) -> Bool {
        weekdays.contains(word.packed)
    }

    /// From the first three letters (so `Jan`, `January`, `Sept`).
    private static func month(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Int? {
        let packed = UInt32(bytes[start] | 0x20) << 16 | UInt32(bytes[start + 1] | 0x20) << 8 | UInt32(bytes[start + 2] | 0x20)
        return months[packed]
    }

    private static let months: [UInt32: Int] = {
        var table: [UInt32: Int] = [:]
        for (index, name) in ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].enumerated() {
            let bytes = Array(name.utf8)
            table[UInt32(bytes[0]) << 16 | UInt32(bytes[1]) << 8 | UInt32(bytes[2])] = index + 1
        }
        return table
    }()

    /// Seconds east of UTC.
    private static let namedZones: [UInt64: Int] = {
        let hours: [(StaticString, Double)] = [
            ("ut", 0), ("utc", 0), ("gmt", 0), ("z", 0), ("wet", 0),
            ("est", -5), ("edt", -4), ("cst", -6), ("cdt", -5), ("mst", -7), ("mdt", -6), ("pst", -8), ("pdt", -7),
            ("akst", -9), ("akdt", -8), ("hst", -10), ("ast", -4), ("adt", -3), ("nst", -3.5), ("ndt", -2.5),
            ("bst", 1), ("ist", 1), ("west", 1), ("cet", 1), ("met", 1), ("cest", 2), ("mest", 2), ("eet", 2), ("eest", 3),
            ("msk", 3), ("jst", 9), ("kst", 9), ("aest", 10), ("aedt", 11), ("acst", 9.5), ("awst", 8), ("nzst", 12), ("nzdt", 13),
        ]
        var table: [UInt64: Int] = [:]
        for (name, offset) in hours { table[packedWord(name)] = Int(offset * 3600) }
        // Military letters as the military uses them: A (+1) to M (+12) skipping J, N (−1) to Y (−12).
        for (index, letter) in "abcdefghiklm".utf8.enumerated() { table[UInt64(letter)] = (index + 1) * 3600 }
        for (index, letter) in "nopqrstuvwxy".utf8.enumerated() { table[UInt64(letter)] = -(index + 1) * 3600 }
        return table
    }()

    /// 0 when there is none or its name is unknown; nil when a numeric offset is malformed.
    static func zoneOffset(_ scanner: inout ByteScanner) -> Int? {
        var offset = 0
        if let first = scanner.current, ByteScanner.isLetter(first) {
            let word = scanner.word()
            offset = word.length <= 8 ? namedZones[word.packed] ?? 0 : 0
            scanner.skipSpaces()
        }
        guard let sign = scanner.current, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else {
            return offset
        }
        scanner.position += 1
        guard let numeric = numericOffset(&scanner) else { return nil }
        return offset + (sign == UInt8(ascii: "-") ? -numeric : numeric)
    }

    /// `0500`, `05:00`, `05` or `5` (after the sign), in seconds.
    static func numericOffset(_ scanner: inout ByteScanner) -> Int? {
        guard let first = scanner.number(maxDigits: 4) else { return nil }
        var hours = first.value, minutes = 0
        switch first.digits {
        case 4, 3:
            hours = first.value / 100
            minutes = first.value % 100
        default:
            if scanner.skip(UInt8(ascii: ":")) {
                guard let m = scanner.number(maxDigits: 2) else { return nil }
                minutes = m.value
            }
        }
        guard hours <= 14, minutes < 60 else { return nil }
        return hours * 3600 + minutes * 60
    }
}

/// ISO 8601 / RFC 3339 as Atom writes it: `2024-01-02T10:00:00.123+05:30`, a space instead of `T`, missing seconds, no
/// zone (UTC), or a date alone (midnight UTC). Fractions of a second are dropped.
enum ISO8601Date {
    static func parse(_ scanner: inout ByteScanner) -> Date? {
        guard let year = scanner.number(maxDigits: 4), year.digits == 4, scanner.skip(UInt8(ascii: "-")),
              let month = scanner.number(maxDigits: 2), scanner.skip(UInt8(ascii: "-")),
              let day = scanner.number(maxDigits: 2) else { return nil }
        var hour = 0, minute = 0, second = 0, offset = 0
        if scanner.skip(UInt8(ascii: "T")) || scanner.skip(UInt8(ascii: "t")) || scanner.skip(UInt8(ascii: " ")) {
            guard let h = scanner.number(maxDigits: 2), scanner.skip(UInt8(ascii: ":")),
                  let m = scanner.number(maxDigits: 2) else { return nil }
            hour = h.value
            minute = m.value
            if scanner.skip(UInt8(ascii: ":")) {
                guard let s = scanner.number(maxDigits: 2) else { return nil }
                second = s.value
                if scanner.skip(UInt8(ascii: ".")) || scanner.skip(UInt8(ascii: ",")) { _ = scanner.number(maxDigits: 12) }
            }
            scanner.skipSpaces()
            if scanner.skip(UInt8(ascii: "Z")) || scanner.skip(UInt8(ascii: "z")) {
                offset = 0
            } else if let sign = scanner.current, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                scanner.position += 1
                guard let numeric = RFC822Date.numericOffset(&scanner) else { return nil }
                offset = sign == UInt8(ascii: "-") ? -numeric : numeric
            }
        }
        guard scanner.atEnd else { return nil }
        return FeedDate.timestamp(year: year.value, month: month.value, day: day.value, hour: hour, minute: minute, second: second, offset: offset)
    }
}
