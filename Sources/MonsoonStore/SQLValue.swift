import Foundation

/// A value SQLite stores.
///
/// Frozen: the set is complete by design (SQLite's five storage classes), so a `switch` over it may be exhaustive.
public enum SQLValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A 64-bit integer; also how booleans are stored (0 or 1).
    case integer(Int64)
    /// A double; also how dates are stored (seconds since 1970).
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Raw bytes.
    case blob(Data)
}

/// A Swift value that binds to a statement parameter.
public protocol SQLValueConvertible {
    /// The value to bind.
    var sqlValue: SQLValue { get }
}

extension SQLValue: SQLValueConvertible {
    /// The value itself.
    public var sqlValue: SQLValue { self }
}

extension Int: SQLValueConvertible {
    /// An integer.
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}

extension Int64: SQLValueConvertible {
    /// An integer.
    public var sqlValue: SQLValue { .integer(self) }
}

extension Bool: SQLValueConvertible {
    /// 1 for true, 0 for false.
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
}

extension Double: SQLValueConvertible {
    /// A real.
    public var sqlValue: SQLValue { .real(self) }
}

extension String: SQLValueConvertible {
    /// Text.
    public var sqlValue: SQLValue { .text(self) }
}

extension Data: SQLValueConvertible {
    /// A blob.
    public var sqlValue: SQLValue { .blob(self) }
}

/// Dates are stored as seconds since 1970, as a real.
extension Date: SQLValueConvertible {
    /// Seconds since 1970, as a real (fractions kept).
    public var sqlValue: SQLValue { .real(timeIntervalSince1970) }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    /// The wrapped value's, or `NULL` for nil.
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}
