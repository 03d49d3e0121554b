import FoundationEssentials
import Glibc

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms.
///
/// Hand-written: DateFormatter is slow and locale-sensitive, and this runs for every response (the
/// engine reads Last-Modified, the test server writes Date) from many threads. Package-wide for the
/// engine, the podcast layer's OPML dates and the test server; no part of any public API.
package enum HTTPDate {
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]

    /// Parses any of the three forms; nil when it is none of them.
    ///
    /// On the text's bytes, without a string made on the way: it runs for every response with a
    /// `Last-Modified`, on the transfer thread.
    package static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        // Split on spaces, commas, dashes and colons: the three forms then differ only in order.
        var tokens: [(start: Int, end: Int)] = []
        tokens.reserveCapacity(8)
        var index = 0
        while index < bytes.count, tokens.count < 8 {
            while index < bytes.count, isSeparator(bytes[index]) { index += 1 }
            let start = index
            while index < bytes.count, !isSeparator(bytes[index]) { index += 1 }
            if index > start { tokens.append((start, index)) }
        }
        guard tokens.count >= 7 else { return nil }
        func number(_ token: Int) -> Int? {
            let (start, end) = tokens[token]
            guard end - start <= 4 else { return nil }
            var value = 0
            for byte in bytes[start..<end] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        func month(_ token: Int) -> Int? {
            let (start, end) = tokens[token]
            guard end - start == 3 else { return nil }
            let key = (UInt32(bytes[start] | 0x20) << 16) | (UInt32(bytes[start + 1] | 0x20) << 8) | UInt32(bytes[start + 2] | 0x20)
            return monthKeys.firstIndex(of: key).map { $0 + 1 }
        }
        var day: Int?, monthNumber: Int?, year: Int?, hour: Int?, minute: Int?, second: Int?
        if let found = month(1) {
            // asctime: "sun nov 6 08 49 37 1994"
            monthNumber = found
            day = number(2); hour = number(3); minute = number(4); second = number(5); year = number(6)
        } else {
            // IMF-fixdate "sun 06 nov 1994 08 49 37 gmt" or RFC 850 "sunday 06 nov 94 08 49 37 gmt"
            day = number(1)
            monthNumber = month(2)
            year = number(3); hour = number(4); minute = number(5); second = number(6)
            if let y = year, tokens[3].end - tokens[3].start == 2 { year = y < 70 ? 2000 + y : 1900 + y }
        }
        guard let day, let monthNumber, let year, let hour, let minute, let second,
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var components = tm()
        components.tm_year = Int32(year - 1900)
        components.tm_mon = Int32(monthNumber - 1)
        components.tm_mday = Int32(day)
        components.tm_hour = Int32(hour)
        components.tm_min = Int32(minute)
        components.tm_sec = Int32(second)
        let seconds = timegm(&components)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func isSeparator(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x2C || byte == 0x2D || byte == 0x3A || byte == 0x09
    }

    /// The months' three lowercase letters, packed: compared without making a string.
    private static let monthKeys: [UInt32] = monthNames.map { name in
        name.lowercased().utf8.reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }
    }

    /// Formats as IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
    package static func format(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(dayNames[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(monthNames[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
