import Foundation

/// What the disk worker does before an attempt starts: read the download's row when the
/// loop does not hold it, look at its part file (size and stored resume state) to plan a
/// resume, drop a part that cannot be resumed, and check free space.
struct StartPreparation: Sendable {
    var id: DownloadID
    /// The loop's record when it holds one; nil: read the row.
    var record: DownloadRecord?
    var diskReserve: Int

    struct Ready: Sendable {
        /// The record the plan was made from (the row, when the loop held none).
        var record: DownloadRecord
        var plan: AttemptPlan
        /// What the part's bytes are, when a part was found (nil: no part).
        var part: (state: ResumeState?, discarded: Bool)?
        /// Not enough room for the rest of the body: the attempt must not start.
        var spaceError: DownloadError?
    }

    enum Outcome: Sendable {
        case ready(Ready)
        /// The row is gone (removed by another process).
        case missing
        /// The row could not be read.
        case failed(ErrorBox)
    }

    /// Plans the attempt from the part on disk, and checks space for what is left.
    static func plan(_ record: DownloadRecord, diskReserve: Int) -> Ready {
        var ready = Ready(record: record, plan: AttemptPlan(offset: 0, ifRange: nil))
        var resume = record.resume
        if let path = record.filePath {
            let partPath = PartFile.path(for: path)
            if let size = PartFile.size(at: partPath) {
                let state = record.resume ?? PartFile.readState(at: partPath)
                ready.plan = AttemptPlan.plan(partSize: size, state: state, url: record.request.url.absoluteString)
                resume = ready.plan.offset > 0 ? state : nil
                if ready.plan.offset == 0 { PartFile.remove(partPath) }   // stale: never splice onto it
                ready.part = (state, ready.plan.offset == 0)
            }
        }
        // Before a byte is asked for: the expected rest plus the reserve (a body that is only
        // counted takes none).
        if case .discard = record.request.destination { return ready }
        let expected = resume?.total ?? record.total ?? record.request.expectedSize
        let remaining = max(0, (expected ?? 0) - ready.plan.offset)
        let folder = record.request.destination.folder
        if let free = FileSystem.freeSpace(at: FileSystem.nearestExistingFolder(folder.isEmpty ? "." : folder)), free < remaining + diskReserve {
            ready.spaceError = DownloadError(.notEnoughDiskSpace, EngineLoop.diskSpaceMessage(needed: remaining, free: free, reserve: diskReserve))
        }
        return ready
    }
}
