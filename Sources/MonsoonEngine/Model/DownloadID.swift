/// Identifies one download for as long as the manager keeps it.
public struct DownloadID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The id as text; ids compare and sort by it.
    public let rawValue: String
    /// The text's hash, worked out once. The engine looks an id up in its tables dozens of times
    /// over a download (about seventy on the transfer thread alone for a small file), and a string
    /// hashes every byte of itself each time. Made by `Hasher`, seeded afresh in each process as
    /// any hash is: ids chosen to collide are no likelier to than before.
    private let textHash: Int

    /// An id from its text; any string is accepted (an empty one asks the manager to choose, see `enqueue`).
    public init(rawValue: String) {
        self.rawValue = rawValue
        textHash = rawValue.hashValue
    }
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public static func == (lhs: DownloadID, rhs: DownloadID) -> Bool {
        lhs.textHash == rhs.textHash && lhs.rawValue == rhs.rawValue
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(textHash)
    }

    public var description: String { rawValue }

    /// Orders ids by their text (so "d10" sorts before "d9").
    public static func < (lhs: DownloadID, rhs: DownloadID) -> Bool { lhs.rawValue < rhs.rawValue }
}
