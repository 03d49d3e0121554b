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
    let store: DownloadStore?

    init(store: DownloadStore?) { self.store = store }

    subscript(id: DownloadID) -> DownloadRecord? {
        get {
            if let record = hot[id] { return record }
            guard let store else { return nil }
            return (try? store.record(withID: id)) ?? nil
        }
        set { hot[id] = newValue }
    }

    /// Whether the record is in memory (no store read).
    func isHot(_ id: DownloadID) -> Bool { hot[id] != nil }

    /// Drops a record at rest from memory; it has been saved.
    mutating func evictIfAtRest(_ id: DownloadID) {
        guard store != nil, let record = hot[id], record.isAtRest else { return }
        hot[id] = nil
    }
}

extension DownloadRecord {
    /// Nothing is happening to it but waiting for its turn (or for the user).
    var isAtRest: Bool {
        switch status {
        case .queued, .paused:
            return transfer == nil && !placing && pendingRemoval == nil && pendingReplacement == nil && restarts == 0
        case .completed, .failed:
            // Restarts only matter to a download that goes on (a resume counts afresh).
            return transfer == nil && !placing && pendingRemoval == nil && pendingReplacement == nil
        case .downloading, .waitingToRetry:
            return false
        }
    }
}
