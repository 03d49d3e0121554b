import FoundationEssentials

/// What those who follow the engine's queue from outside ask of it: the states of downloads,
/// by id or by who owns them (see `DownloadOwner`).
///
/// - Important: confined to one thread at a time, like a database connection.
package protocol DownloadStateReading: AnyObject {
    /// What the queue says of the downloads with these ids (those that exist, in no set order), in one call.
    func states(of ids: [DownloadID]) throws -> [StoredDownloadState]
    /// What the queue says of the downloads `owner` answers for, changed at or after `since`
    /// (all of them for nil), in enqueue order: one at a time, so a large queue is never all in memory.
    /// `body` must not change `downloads` through the same connection: the rows are still being read.
    func forEachState(ownedBy owner: DownloadOwner, changedSince since: Date?, _ body: (StoredDownloadState) throws -> Void) throws
}
