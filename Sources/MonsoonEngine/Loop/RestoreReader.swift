import FoundationEssentials
import MonsoonStore

/// Reads the queue's rows for the engine, on the disk worker (the transfer thread never reads the
/// database): every row at restore, in chunks, and later the rows other processes added. Each row
/// comes with its part inspected, as the `PersistenceGateway` adopts it.
enum RestoreReader {
    /// A row as stored, and as its part says it is.
    typealias Row = (stored: DownloadRecord, inspected: DownloadRecord)

    /// What the disk worker answers while it restores the queue, in order.
    enum Message: Sendable {
        /// Rows with their parts inspected (a chunk: a large queue is never all in memory).
        case rows([Row])
        /// A row or a part that could not be read or cut back (kept for `persistenceError`).
        case problem(ErrorBox)
        /// Every row is in: the next sequence to give out, and the highest the restore saw, its
        /// completed rows' included (nil: unknown).
        case done(nextSequence: Int?, seenThrough: Int? = nil)
    }

    /// Rows another process added, each with its part inspected, and why one was left out (it
    /// stays in the table; `persistenceError` reports it).
    typealias NewRows = (rows: [Row], unreadable: ErrorBox?)

    /// Rows handed back at a time.
    static let chunk = 512

    /// Reads every row of a download not completed and looks at its part, handing them to `post`
    /// in chunks; stops reading once `post` fails (the engine shut down). A completed one is at rest:
    /// reading the rows of a home's ten thousand finished downloads cost each command 0.1 s at start.
    static func restore(from store: any QueueStore, post: @escaping (Message) -> Bool) {
        var open = true
        func note(_ operation: () throws -> Void) {
            do { try operation() } catch { open = post(.problem(ErrorBox(error: error))) && open }
        }
        // After a reboot, bytes past the last flush may be garbage: cut parts back to their checkpoints.
        var stored: String?
        var storedWasRead = false
        note {   // a failure is reported, and is no reboot
            stored = try store.meta("boot_id")
            storedWasRead = true
        }
        let rebooted = BootID.rebooted(since: stored)
        var cutFailed = false
        var restoredAll = false
        var seenThrough: Int?
        var rows: [Row] = []
        // One row at a time, handed on in chunks. A row that cannot be read is skipped (and
        // reported), not the end of the restore.
        note {
            try store.transaction {
                try store.forEachUnfinishedRecord(skippingUnreadable: {
                    open = post(.problem(ErrorBox(error: $0))) && open
                    cutFailed = true   // its part was not looked at
                }) { record in
                    guard open else { return }   // shut down: what is left is not needed
                    var problem: DownloadError?
                    let inspected = record.inspectingPart(rebooted: rebooted, problem: &problem)
                    rows.append((record, inspected))
                    if let problem {
                        open = post(.problem(ErrorBox(error: problem))) && open
                        if inspected.status == .failed { cutFailed = true }   // the part is still there, uncut
                    }
                    if rows.count == chunk {
                        open = post(.rows(rows)) && open
                        rows = []
                    }
                }
                // The rows past it are new to this run, whatever their status (`newRows`).
                seenThrough = try store.nextSequence() - 1
            }
            restoredAll = open
        }
        if !rows.isEmpty { open = post(.rows(rows)) && open }
        // Replaced only once read, and every row read and its part cut back: otherwise a reboot
        // since the stored id would go unnoticed by every later run.
        if storedWasRead, restoredAll, !cutFailed, let current = BootID.current, current != stored { note { try store.setMeta("boot_id", current) } }
        var next: Int?
        note { next = try store.nextSequence() }
        _ = post(.done(nextSequence: next, seenThrough: seenThrough))   // not posted: shut down, nothing waits for it
    }

    /// `newRows` as the disk worker's read for the loop (`EngineCore.adoptNewRows`).
    static func newRows(after sequence: Int) -> @Sendable ((any QueueStore)?) -> Result<NewRows, ErrorBox> {
        { store in Result { try store.map { try newRows(in: $0, after: sequence) } ?? ([], nil) }.mapError { ErrorBox(error: $0) } }
    }

    /// The rows past `sequence` (AUTOINCREMENT numbers every process's rows after all earlier
    /// ones), each with its part inspected.
    static func newRows(in store: any QueueStore, after sequence: Int) throws -> NewRows {
        var found: NewRows = ([], nil)
        try store.forEachRecord(after: sequence, skippingUnreadable: { found.unreadable = found.unreadable ?? ErrorBox(error: $0) }) { row in
            var unused: DownloadError?   // set only when cutting back after a reboot, which this is not
            found.rows.append((row, row.inspectingPart(rebooted: false, problem: &unused)))
        }
        return found
    }
}
