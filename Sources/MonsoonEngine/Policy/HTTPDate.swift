import Foundation

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms.
///
/// Hand-written: DateFormatter is slow and locale-sensitive. Package-wide for the podcast layer,
/// whose OPML dates are written the same way; not public: it is no part of the engine's API.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]

    /// Parses any of the three forms; nil when it is none of them.
    package static func parse(_ text: String) -> Date? {
        // Split on spaces, commas, dashes and colons: the three forms then differ only in order.
        let parts = text.lowercased().split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" || $0 == ":" })
        guard parts.count >= 7 else { return nil }
        var day: Int?, month: Int?, year: Int?, hour: Int?, minute: Int?, second: Int?
        if let index = months.firstIndex(of: String(parts[1].prefix(3))), parts[1].count == 3 {
            // asctime: "sun nov 6 08 49 37 1994"
            month = index + 1
            day = Int(parts[2]); hour = Int(parts[3]); minute = Int(parts[4]); second = Int(parts[5]); year = Int(parts[6])
        } else {
            // IMF-fixdate "sun 06 nov 1994 08 49 37 gmt" or RFC 850 "sunday 06 nov 94 08 49 37 gmt"
            day = Int(parts[1])
            month = months.firstIndex(of: String(parts[2])).map { $0 + 1 }
            year = Int(parts[3]); hour = Int(parts[4]); minute = Int(parts[5]); second = Int(parts[6])
            if let y = year, parts[3].count == 2 { year = y < 70 ? 2000 + y : 1900 + y }
        }
        guard let day, let month, let year, let hour, let minute, let second,
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var components = tm()
        components.tm_year = Int32(year - 1900)
        components.tm_mon = Int32(month - 1)
        components.tm_mday = Int32(day)
        components.tm_hour = Int32(hour)
        components.tm_min = Int32(minute)
        components.tm_sec = Int32(second)
        let seconds = timegm(&components)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
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
