/// Identifies one download for as long as the manager keeps it.
public struct DownloadID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The id as text; ids compare and sort by it.
    public let rawValue: String

    /// An id from its text; any string is accepted (an empty one asks the manager to choose, see `enqueue`).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An id from its text.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// An id written as a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The id's text.
    public var description: String { rawValue }

    /// Orders ids by their text (so "d10" sorts before "d9").
    public static func < (lhs: DownloadID, rhs: DownloadID) -> Bool { lhs.rawValue < rhs.rawValue }
}
