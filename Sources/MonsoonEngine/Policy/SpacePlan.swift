/// Whether a whole queue fits on the disk, and what to download when it does not.
///
/// Downloads are taken in queue order; each one whose remaining bytes still fit in what is
/// left is in, the others wait (a later, smaller one may still fit). A download of unknown
/// size counts as zero here: the engine checks it again once the server tells its length.
public struct SpacePlan: Sendable, Equatable {
    /// What fits, in queue order.
    public var fits: [DownloadID]
    /// What does not, in queue order.
    public var waits: [DownloadID]
    /// The bytes the whole queue still needs.
    public var needed: Int
    /// The bytes that may be used: free space minus the reserve.
    public var available: Int

    /// True when every download fits: nothing needs to wait for space.
    public var fitsWhole: Bool { waits.isEmpty }

    /// - Parameters:
    ///   - queue: each download's remaining bytes (nil: unknown), in queue order.
    ///   - free: free bytes on the file system; `reserve`: bytes to leave free.
    public init(queue: [(id: DownloadID, remaining: Int?)], free: Int, reserve: Int) {
        available = max(0, free - reserve)
        needed = queue.reduce(0) { $0 + max(0, $1.remaining ?? 0) }
        fits = []
        waits = []
        var left = available
        for item in queue {
            let size = max(0, item.remaining ?? 0)
            if size <= left {
                fits.append(item.id)
                left -= size
            } else {
                waits.append(item.id)
            }
        }
    }

    /// Free bytes on the file system that holds (or will hold) `folder`, for the caller; nil when
    /// it cannot be told, or the file system is read-only (no room to plan: each download then
    /// fails with that reason, not as one waiting for space).
    public static func freeBytes(for folder: String) -> Int? {
        guard let space = VolumeSpace.measure(folder), !space.readOnly else { return nil }
        return space.free
    }
}
