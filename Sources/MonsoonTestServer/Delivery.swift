import FoundationEssentials

/// Body bytes of one write to a client's socket: what the server handed the kernel, and when.
/// Recorded once ``TestServer/recordDeliveries()`` was called.
///
/// A write blocks while the client's receive window is full (a client that reads slowly, or has
/// stopped reading), so its bytes went out between `start` and `end`: spread evenly over that
/// span, the writes tell what a client took off the wire, by the server's clock.
public struct Delivery: Sendable {
    /// The request target the bytes answer, as ``RecordedRequest/path`` has it (query included).
    public var path: String
    /// The TCP connection, as ``RecordedRequest/connectionID`` numbers it.
    public var connectionID: Int
    public var start: Date
    /// When the write returned: every byte was with the kernel.
    public var end: Date
    public var bytes: Int

    public init(path: String, connectionID: Int, start: Date, end: Date, bytes: Int) {
        self.path = path
        self.connectionID = connectionID
        self.start = start
        self.end = end
        self.bytes = bytes
    }

    /// The bytes of this write that went out between `from` and `to`, the write spread evenly
    /// over its span (all or nothing for a write that took no time).
    public func bytes(from: Date, to: Date) -> Double {
        let span = end.timeIntervalSince(start)
        guard span > 0 else { return start >= from && start < to ? Double(bytes) : 0 }
        let overlap = min(to, end).timeIntervalSince(max(from, start))
        return overlap > 0 ? Double(bytes) * overlap / span : 0
    }
}
