import FoundationEssentials

/// A value sent as a statement's parameter (`$1`, `$2` …), in PostgreSQL's text format: the
/// server reads the text as the type the statement gives the parameter (a column's, or a cast's:
/// `$1::bigint`). `nil` in a parameter list is SQL `NULL`.
///
///     try connection.execute("INSERT INTO monsoon_feeds (url, title) VALUES ($1, $2)", [url, nil])
public protocol PostgresValue: Sendable {
    /// The value as PostgreSQL reads it in text format.
    var postgresText: String { get }
}

/// Texts, integers and booleans are written as Swift writes them (`true`, `false`), which is
/// how PostgreSQL reads them.
extension PostgresValue where Self: LosslessStringConvertible {
    public var postgresText: String { description }
}

extension String: PostgresValue {}
extension Substring: PostgresValue {}
extension Int: PostgresValue {}
extension Int64: PostgresValue {}
extension Int32: PostgresValue {}
extension Bool: PostgresValue {}

extension Double: PostgresValue {
    /// Swift's shortest exact form, which `float8` reads back to the same value; the infinities
    /// and NaN by the names PostgreSQL gives them.
    public var postgresText: String {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return String(self)
    }
}

extension Date: PostgresValue {
    /// ISO 8601 in UTC to the microsecond (`2026-12-01 10:00:00.123456+00`): `timestamptz` reads it
    /// whatever the session's `DateStyle` and time zone.
    public var postgresText: String { PostgresTimestamp.text(of: self) }
}
