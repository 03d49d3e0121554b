import Foundation

/// Dates as Monsoon writes them: in UTC, without a formatter (listings of thousands of
/// episodes format thousands of dates).
public enum UTCDate {
    /// Year, month and day, zero-padded: ("2024", "01", "31").
    public static func day(_ date: Date) -> (year: String, month: String, day: String) {
        let parts = components(date)
        return (String(parts.tm_year + 1900), two(parts.tm_mon + 1), two(parts.tm_mday))
    }

    /// ISO 8601 to the second: "2024-01-31T10:00:00Z".
    public static func iso(_ date: Date) -> String {
        let parts = components(date)
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    private static func components(_ date: Date) -> tm {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        return parts
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
