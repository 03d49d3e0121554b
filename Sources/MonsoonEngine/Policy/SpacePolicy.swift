/// How much a disk may still take, and what fits: pure answers from the last measurement and
/// what the loop counted since (see `SpaceGovernor`).
///
/// Each file system has an *allowance*: its free space at the last measurement, less the
/// reserve, less every byte written there since. A write that would take more than the
/// allowance waits for a new measurement; a download starts only when what it still needs fits
/// in the allowance beside what the running downloads on the same disk still need.
enum SpacePolicy {
    /// What a download of unknown size counts as needing before it may start again after it ran
    /// out of room (a smaller gap would only fill up again at once).
    static let unknownSizeNeed = 8 << 20

    /// How often a disk that downloads write to, or that downloads wait for, is measured again:
    /// other programs take and free space too.
    static let measureInterval = 2.0

    /// The allowance after a measurement of `free` bytes. `writtenSinceRequest`: what was written
    /// there since the measurement was asked for (some of it may be counted in `free` already:
    /// counted twice, the allowance errs on the side of the reserve).
    static func allowance(free: Int, reserve: Int, writtenSinceRequest: Int) -> Int {
        free - reserve - max(0, writtenSinceRequest)
    }

    /// Whether a download that still needs `needed` bytes fits beside the running downloads,
    /// which still need `committed`.
    static func fits(needed: Int, allowance: Int, committed: Int) -> Bool {
        needed <= allowance - committed
    }

    /// What a download still needs: the rest of its expected size, else `unknownSizeNeed`.
    static func need(expected: Int?, have: Int) -> Int {
        expected.map { max(0, $0 - have) } ?? unknownSizeNeed
    }

    /// The held downloads that fit now, in `holds`' order (queue order): each one let go counts
    /// against the room for the next; one that does not fit does not stop a later, smaller one.
    static func releasable<ID>(_ holds: [(id: ID, needed: Int)], allowance: Int, committed: Int) -> [ID] {
        var left = allowance - committed
        var released: [ID] = []
        for hold in holds where hold.needed <= left {
            released.append(hold.id)
            left -= hold.needed
        }
        return released
    }
}
