import FoundationEssentials

/// What the disk worker does before an attempt starts: read the download's row when the
/// loop does not hold it, look at its part file (size and stored resume state) to plan a
/// resume, drop a part that cannot be resumed, and check free space.
struct StartPreparation: Sendable {
    var id: DownloadID
    /// The loop's record when it holds one; nil: read the row.
    var record: DownloadRecord?

    struct Ready: Sendable {
        /// The record the plan was made from (the row, when the loop held none).
        var record: DownloadRecord
        var plan: AttemptPlan
        /// What the part's bytes are, when a part was found (nil: no part).
        var part: (state: ResumeState?, discarded: Bool)?
        /// The disk the file goes to, measured now (nil for a counted body, or a disk that could
        /// not be measured): the loop decides whether the rest fits beside the running downloads.
        var space: VolumeSpace?
        /// `space` is the loop's last measurement of the folder, not a new one (`SpaceGovernor.plannedStart`).
        var spaceReused = false
    }

    enum Outcome: Sendable {
        case ready(Ready)
        /// The row is gone (removed by another process).
        case missing
        /// The row could not be read.
        case failed(ErrorBox)
    }

    /// Plans the attempt from the part on disk, and measures the disk for what is left.
    static func plan(_ record: DownloadRecord) -> Ready {
        var ready = Ready(record: record, plan: AttemptPlan(offset: 0, ifRange: nil))
        if let path = record.filePath {
            let partPath = PartFile.path(for: path)
            if let size = PartFile.size(at: partPath) {
                let state = record.resume ?? PartFile.readState(at: partPath)
                ready.plan = AttemptPlan.plan(partSize: size, state: state, url: record.request.url.absoluteString)
                if ready.plan.offset == 0 { PartFile.remove(partPath, root: record.request.root) }   // stale: never splice onto it
                ready.part = (state, ready.plan.offset == 0)
            }
        }
        // A body that is only counted takes no room.
        if case .discard = record.request.destination { return ready }
        ready.space = VolumeSpace.measure(record.request.destination.folder)
        return ready
    }
}
