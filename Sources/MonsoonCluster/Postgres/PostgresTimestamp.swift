import FoundationEssentials
import Glibc

/// `timestamptz` to and from text.
enum PostgresTimestamp {
    /// `date` as ISO 8601 in UTC, to the microsecond.
    static func text(of date: Date) -> String {
        var microseconds = (date.timeIntervalSince1970 * 1_000_000).rounded()
        if !microseconds.isFinite { microseconds = 0 }
        var seconds = time_t((microseconds / 1_000_000).rounded(.down))
        let fraction = Int(microseconds - Double(seconds) * 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return padded(Int(parts.tm_year) + 1900, 4) + "-" + padded(Int(parts.tm_mon) + 1, 2) + "-" + padded(Int(parts.tm_mday), 2) + " "
            + padded(Int(parts.tm_hour), 2) + ":" + padded(Int(parts.tm_min), 2) + ":" + padded(Int(parts.tm_sec), 2) + "." + padded(fraction, 6) + "+00"
    }

    /// A `timestamptz` as the server writes it with `DateStyle` ISO (`2026-12-01 10:00:00.5+01`,
    /// `…+05:30`, `infinity`), or nil for anything else (a BC date, another `DateStyle`).
    static func date(from text: String) -> Date? {
        if text == "infinity" { return .distantFuture }
        if text == "-infinity" { return .distantPast }
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + digits] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += digits
            return value
        }
        func skip(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2), skip(" "),
              let hour = number(2), skip(":"), let minute = number(2), skip(":"), let second = number(2) else { return nil }
        var fraction = 0.0
        if skip(".") {
            var scale = 0.1
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") else { return nil }
        let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
        index += 1
        guard let offsetHours = number(2) else { return nil }
        var offset = offsetHours * 3600
        if skip(":") { guard let minutes = number(2) else { return nil }; offset += minutes * 60 }
        if skip(":") { guard let seconds = number(2) else { return nil }; offset += seconds }
        guard index == bytes.count else { return nil }
        var parts = tm(tm_sec: Int32(second), tm_min: Int32(minute), tm_hour: Int32(hour), tm_mday: Int32(day), tm_mon: Int32(month - 1),
                       tm_year: Int32(year - 1900), tm_wday: 0, tm_yday: 0, tm_isdst: 0, tm_gmtoff: 0, tm_zone: nil)
        let utc = timegm(&parts)
        return Date(timeIntervalSince1970: Double(utc - sign * offset) + fraction)
    }
}
