import FoundationEssentials

/// A value SQLite stores.
///
/// Frozen: the set is complete by design (SQLite's five storage classes), so a `switch` over it may be exhaustive.
public enum SQLValue: Sendable, Hashable {
    case null
    /// A 64-bit integer; also how booleans are stored (0 or 1).
    case integer(Int64)
    /// A double; also how dates are stored (seconds since 1970).
    case real(Double)
    case text(String)
    case blob(Data)
}

/// A Swift value that binds to a statement parameter.
public protocol SQLValueConvertible {
    var sqlValue: SQLValue { get }
}

extension SQLValue: SQLValueConvertible {
    public var sqlValue: SQLValue { self }
}

extension Int: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}

extension Int64: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(self) }
}

extension Bool: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
}

extension Double: SQLValueConvertible {
    public var sqlValue: SQLValue { .real(self) }
}

extension String: SQLValueConvertible {
    public var sqlValue: SQLValue { .text(self) }
}

extension Data: SQLValueConvertible {
    public var sqlValue: SQLValue { .blob(self) }
}

extension Date: SQLValueConvertible {
    /// Seconds since 1970, as a real (fractions kept).
    public var sqlValue: SQLValue { .real(timeIntervalSince1970) }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}
