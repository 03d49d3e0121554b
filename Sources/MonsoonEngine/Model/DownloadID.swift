/// Identifies one download for as long as the manager keeps it.
public struct DownloadID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    public static func < (lhs: DownloadID, rhs: DownloadID) -> Bool { lhs.rawValue < rhs.rawValue }
}
