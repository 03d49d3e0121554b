import Foundation

/// Places finished files off the transfer thread, with group commit: while one batch is
/// being flushed, the files that finish meanwhile gather into the next, so a busy queue of
/// small files pays for one journal commit and one folder flush per batch, not per file.
///
/// Checkpoint flushes of running parts go to a queue of their own, so a large flush never
/// holds a finished file back.
final class Placer: Sendable {
    private struct Pending {
        var batch: [(DownloadID, Placement)] = []
        var scheduled = false
    }

    private let queue = DispatchQueue(label: "monsoon.placement")
    private let checkpoints = DispatchQueue(label: "monsoon.checkpoints")
    private let pending = Locked(Pending())
    private let inbox: EngineInbox

    init(inbox: EngineInbox) { self.inbox = inbox }

    /// Queues finished files; their results come back to the loop through the inbox.
    func place(_ files: [(DownloadID, Placement)]) {
        guard !files.isEmpty else { return }
        let schedule = pending.withLock { pending -> Bool in
            pending.batch.append(contentsOf: files)
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Flushes `fd` (a duplicate of a running part's descriptor, closed here), then runs `done`
    /// with whether it worked.
    func flush(_ fd: Int32, then done: @escaping @Sendable (Bool) -> Void) {
        checkpoints.async {
            let flushed = fdatasync(fd) == 0
            close(fd)
            done(flushed)
        }
    }

    /// Returns once every file queued so far is placed and its result posted (at shutdown).
    func waitUntilDone() {
        queue.sync {}
        checkpoints.sync {}
    }

    private func drain() {
        let batch = pending.withLock { pending -> [(DownloadID, Placement)] in
            pending.scheduled = false
            defer { pending.batch.removeAll() }
            return pending.batch
        }
        let results = Placement.performBatch(batch)
        // Their rows go to the disk worker together: one transaction for the batch.
        inbox.post { loop in
            for (id, result) in results { loop.placementFinished(id, result) }
        }
    }
}
