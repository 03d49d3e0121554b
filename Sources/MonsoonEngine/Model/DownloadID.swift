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

    /// What a `Set` or `Dictionary` asks for, in place of a `Hasher` run over `textHash` (about 170
    /// of a lookup's 240 instructions): the text's hash, already seeded and spread, mixed with the
    /// table's seed by SplitMix64's finalizer, so that two tables still order the same ids
    /// differently. Equal ids give equal values: both come from the text alone.
    public func _rawHashValue(seed: Int) -> Int {
        var mixed = UInt64(truncatingIfNeeded: textHash ^ seed)
        mixed = (mixed ^ (mixed >> 30)) &* 0xbf58_476d_1ce4_e5b9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94d0_49bb_1331_11eb
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 31))
    }

    public var description: String { rawValue }

    /// Orders ids by their text (so "d10" sorts before "d9").
    public static func < (lhs: DownloadID, rhs: DownloadID) -> Bool { lhs.rawValue < rhs.rawValue }
}
