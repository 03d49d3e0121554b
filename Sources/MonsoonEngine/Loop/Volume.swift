import FoundationEssentials

/// A file system the loop writes to, and what may still be written there before its reserve.
/// Confined to the transfer thread, where curl's write callback spends from it.
final class Volume {
    let id: UInt64
    let folder: String
    /// Bytes that may still be written: the last measurement's free space, less the reserve,
    /// less every byte written since. Negative once something else filled the disk.
    var allowance: Int
    /// Every byte the loop wrote there (to tell which writes a measurement has not seen).
    var written = 0
    var measuring = false
    var measuredAt: Date

    init(id: UInt64, folder: String, allowance: Int, measuredAt: Date) {
        self.id = id
        self.folder = folder
        self.allowance = allowance
        self.measuredAt = measuredAt
    }

    /// Bytes spent from the allowance that were not written after all (dropped, or a write failed).
    func giveBack(_ bytes: Int) {
        allowance += bytes
        written -= bytes
    }
}
