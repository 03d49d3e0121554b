import Foundation

/// The download records of the loop.
///
/// Without a store, every record lives here. With one, only the records that are
/// busy (downloading, waiting to retry, being placed, or just changed) stay in
/// memory; a record at rest is written to the store and dropped, and read back
/// when it is needed. So memory stays flat with a hundred thousand downloads
/// queued: what remains of a queued one is its small `QueueIndex` entry.
struct RecordTable {
    private(set) var hot: [DownloadID: DownloadRecord] = [:]
    /// Saves handed to the disk worker and not yet committed, by download: a record stays in
    /// memory until its last one is, or a read of the store would find an older row.
    private var unsaved: [DownloadID: Int] = [:]
    /// Records are kept in a store (else every record stays here).
    let persistent: Bool

    init(persistent: Bool) { self.persistent = persistent }

    /// Rows the disk worker read for the command running now (see `EngineLoop.withRows`):
    /// the table never reads the store itself, on the transfer thread.
    private var preloaded: [DownloadID: DownloadRecord] = [:]

    /// The record in memory, else the one read for the running command; nil: no such download.
    subscript(id: DownloadID) -> DownloadRecord? {
        get { hot[id] ?? preloaded[id] }
        set { hot[id] = newValue }
    }

    /// Rows read for a command, until `endPreload`.
    mutating func preload(_ rows: [DownloadRecord]) {
        for row in rows where hot[row.request.id] == nil { preloaded[row.request.id] = row }
    }

    mutating func endPreload() {
        preloaded.removeAll()
    }

    /// Forgets a record (removed), also one read for the running command.
    mutating func remove(_ id: DownloadID) {
        hot[id] = nil
        preloaded[id] = nil
    }

    /// Whether the record is in memory (no store read).
    func isHot(_ id: DownloadID) -> Bool { hot[id] != nil }

    /// Drops a record at rest from memory, once its row holds all of it.
    mutating func evictIfAtRest(_ id: DownloadID) {
        guard persistent, unsaved[id] == nil, let record = hot[id], record.isAtRest else { return }
        hot[id] = nil
    }

    /// A save of `id` was handed to the disk worker.
    mutating func saving(_ id: DownloadID) {
        unsaved[id, default: 0] += 1
    }

    /// The worker committed these saves (an id once per save).
    mutating func saved(_ ids: [DownloadID]) {
        for id in ids {
            guard let count = unsaved[id] else { continue }
            if count > 1 {
                unsaved[id] = count - 1
            } else {
                unsaved[id] = nil
                evictIfAtRest(id)
            }
        }
    }
}

extension DownloadRecord {
    /// Nothing is happening to it but waiting for its turn (or for the user).
    var isAtRest: Bool {
        switch status {
        case .queued, .paused:
            return !isRunning && !placing && pendingRemoval == nil && pendingReplacement == nil && restarts == 0
        case .completed, .failed:
            // Restarts only matter to a download that goes on (a resume counts afresh).
            return !isRunning && !placing && pendingRemoval == nil && pendingReplacement == nil
        case .downloading, .waitingToRetry:
            return false
        }
    }
}
