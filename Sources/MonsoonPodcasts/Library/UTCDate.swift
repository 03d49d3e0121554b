import FoundationEssentials

/// In UTC, without a formatter (listings format thousands of dates), the year always in four digits (`0001`), as
/// `FeedDate.iso8601String` writes it for `inspect`.
public enum UTCDate {
    /// Year, month and day, zero-padded: ("2024", "01", "31").
    public static func day(_ date: Date) -> (year: String, month: String, day: String) {
        let text = iso(date).utf8
        func piece(_ range: Range<Int>) -> String {
            String(decoding: text.dropFirst(range.lowerBound).prefix(range.count), as: UTF8.self)
        }
        return (piece(0..<4), piece(5..<7), piece(8..<10))
    }

    /// ISO 8601 to the second: "2024-01-31T10:00:00Z".
    public static func iso(_ date: Date) -> String {
        FeedDate.iso8601String(date)
    }
}
