import CCurl
import FoundationEssentials
import Glibc
import Dispatch

/// Places finished files off the transfer thread, with group commit: while one batch is
/// being flushed, the files that finish meanwhile gather into the next, so a busy queue of
/// small files pays for one journal commit and one folder flush per batch, not per file.
///
/// Checkpoint flushes of running parts go to a queue of their own, so a large flush never
/// holds a finished file back; the quick calls (starting writeback, closing a part) to a third,
/// so they never wait behind a flush.
final class Placer: Sendable {
    private let files: BatchingQueue<(DownloadID, Placement)>
    private let checkpoints = DispatchQueue(label: "monsoon.checkpoints")
    private let quick = DispatchQueue(label: "monsoon.writeback")

    /// - Parameter warc: where finished files are recorded before they are placed (nil: nowhere).
    init(inbox: EngineInbox, warc: WARCArchive?) {
        files = BatchingQueue(label: "monsoon.placement") { batch in
            let (results, recorded) = Placement.performBatch(batch, warc: warc)
            // Their rows go to the disk worker together: one transaction for the batch.
            inbox.send(.placed(results, recorded: recorded))
        }
    }

    /// Queues finished files; their results come back to the loop through the inbox.
    func place(_ batch: [(DownloadID, Placement)]) {
        files.submit(batch)
    }

    /// Flushes `fd` (a running part's: a duplicate, or at shutdown the part's own), closes it,
    /// then runs `done` with whether the flush worked.
    func flush(_ fd: Int32, then done: @escaping @Sendable (Bool) -> Void) {
        checkpoints.async {
            let flushed = fdatasync(fd) == 0
            close(fd)
            done(flushed)
        }
    }

    /// Starts writing back `length` bytes of a running part from `offset` (`fd` is a duplicate,
    /// closed here): a hint that keeps the disk busy during a long transfer, so the final
    /// flush has little left to do. Off the transfer thread, since it can wait for the disk.
    func startWriteback(_ fd: Int32, offset: Int, length: Int) {
        quick.async {
            _ = monsoon_start_writeback(fd, Int64(offset), Int64(length))   // a hint: the fsync at the end is what counts
            Glibc.close(fd)
        }
    }

    /// Closes a part's descriptor off the transfer thread: a close can write back (NFS does).
    func closePart(_ fd: Int32) {
        quick.async { _ = Glibc.close(fd) }   // nothing to do about a failed close of a part kept for later
    }

    /// Returns once every file queued so far is placed and its result posted (at shutdown).
    func waitUntilDone() {
        files.waitUntilDone()
        checkpoints.sync {}
        quick.sync {}
    }
}
