import Foundation

/// The engine's queue as a store: the one way in to the downloads' rows, their commands and
/// the engine's own notes, for the engine, the podcast layer and the CLI alike.
///
/// `DownloadStore` (SQLite) meets the requirements, checked by the conformance suite
/// (`QueueStoreConformanceTests`). They are written for a database across a network too:
/// - reads and deletions take lists of ids and answer in one call (an implementation
///   batches them: one statement per chunk of ids, never one per id);
/// - no signature names a type of SQLite's, and no caller passes SQL;
/// - nothing assumes that other tables (the podcast library's) live in the same database:
///   a caller that needs both reads its own rows, then asks here for the downloads of their ids.
///
/// Rows are keyed by id and by sequence number (enqueue order): writes name both, so a save
/// queued for a download that was removed and added again under the same id changes nothing.
///
/// - Important: confined to one thread at a time, like a database connection.
package protocol QueueStore: AnyObject {
    // MARK: The engine's rows (the transfer thread and its disk worker)

    /// Inserts a new download at `record.sequence` (0: the next one); returns its sequence number.
    func insert(_ record: DownloadRecord) throws -> Int
    /// Writes a download's state (everything but its identity and request; its URL when it changed).
    func update(_ record: DownloadRecord) throws
    /// Saves progress: bytes in the part and, after an fsync, the checkpoint.
    func updateProgress(id: DownloadID, sequence: Int, bytes: Int, total: Int?, checkpoint: Int?) throws
    /// Deletes one download's row, if it still has this sequence number.
    func delete(_ id: DownloadID, sequence: Int) throws
    /// One download's row, by id.
    func record(withID id: DownloadID) throws -> DownloadRecord?
    /// The rows among `ids` that exist, in enqueue order.
    /// - Parameter skippingUnreadable: given, a row that cannot be read goes to it and is left
    ///   out instead of failing the whole read.
    func records(withIDs ids: [DownloadID], skippingUnreadable: ((Error) -> Void)?) throws -> [DownloadRecord]
    /// The rows of downloads of `url`, in enqueue order.
    func records(of url: URL) throws -> [DownloadRecord]
    /// The rows of downloads of each of `urls`, in enqueue order.
    func records(of urls: [URL]) throws -> [[DownloadRecord]]
    /// Streams the rows whose sequence number is above `sequence` (0: all), in enqueue order,
    /// so a large queue is never all in memory. An unreadable row goes to `skippingUnreadable`
    /// when given, else throws.
    func forEachRecord(after sequence: Int, skippingUnreadable: ((Error) -> Void)?, _ body: (DownloadRecord) throws -> Void) throws
    /// The unfinished download whose file is `path`, if any.
    func owner(ofPath path: String) throws -> DownloadID?
    /// The ids of the downloads in `status`, in enqueue order.
    func ids(withStatus status: DownloadStatus) throws -> [DownloadID]
    /// The next sequence number an insert would give.
    func nextSequence() throws -> Int
    /// The engine's own notes (the boot id of the last restore, say).
    func meta(_ key: String) throws -> String?
    func setMeta(_ key: String, _ value: String) throws
    /// The note under `key`, set to `value` first if there is none (another connection's, set
    /// meanwhile, stands).
    func meta(_ key: String, orSet value: String) throws -> String
    /// Runs `body` as one transaction; `durably`, its commit survives a power cut.
    func transaction<T>(durably: Bool, _ body: () throws -> T) throws -> T

    // MARK: Other processes: commands and additions

    /// Posts a command for the process running this queue; returns its number.
    @discardableResult
    func post(_ command: DownloadCommand) throws -> Int
    /// Whether any posted command (or any up to number `seq`) still waits for the running process.
    func hasPendingCommands(through seq: Int) throws -> Bool
    /// The commands posted after `seq`, in order, with the last one's number (read only).
    func commands(after seq: Int) throws -> (commands: [DownloadCommand], last: Int)
    /// Deletes the commands up to number `seq` (once applied).
    func deleteCommands(through seq: Int) throws
    /// Adds downloads from a process that does not run the queue; returns their ids.
    func add(_ requests: [DownloadRequest]) throws -> [DownloadID]
    /// A number that moves when another connection changes the queue: read the rows again
    /// only when it does.
    func changeCounter() throws -> Int

    // MARK: Listing and housekeeping (the CLI)

    /// Every download, in enqueue order.
    func downloads() throws -> [Download]
    /// One download, by id.
    func download(withID id: DownloadID) throws -> Download?
    /// The downloads of `url`, in enqueue order.
    func downloads(of url: URL) throws -> [Download]
    /// The downloads among `ids` that exist, in enqueue order.
    func downloads(withIDs ids: [DownloadID]) throws -> [Download]
    /// How many downloads are in each status.
    func counts() throws -> [DownloadStatus: Int]
    /// Streams the queue for listing, in enqueue order.
    func forEachSummary(_ body: (DownloadSummary) throws -> Void) throws
    /// The downloads that will run, in the order they start, with the bytes each still needs
    /// (nil while unknown) and its folder.
    func pending() throws -> [(id: DownloadID, remaining: Int?, folder: String)]
    /// Changes a stored download's request (its id's) while no engine runs the queue (see `DownloadStore`).
    @discardableResult
    func updateRequest(_ request: DownloadRequest) throws -> Bool
    /// Forgets every download in one of `statuses`; returns how many.
    func forget(withStatus statuses: Set<DownloadStatus>) throws -> Int
    /// Forgets those of `ids` whose status is one of `statuses` (their files stay); returns how many.
    func forget(_ ids: [DownloadID], ifIn statuses: Set<DownloadStatus>) throws -> Int

    // MARK: The podcast layer

    /// What the queue says of the downloads with these ids (those that exist, in no set order), in one call.
    func states(of ids: [DownloadID]) throws -> [StoredDownloadState]
    /// What the queue says of the downloads `owner` answers for, changed at or after `since`
    /// (all of them for nil), in enqueue order.
    func states(ownedBy owner: DownloadOwner, changedSince since: Date?) throws -> [StoredDownloadState]
}

extension QueueStore {
    /// `transaction(durably: false, body)`: a crash loses none of its commits, a power cut
    /// may lose the last few, which only rolls state back.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try transaction(durably: false, body)
    }

    /// One read of the rows of each URL after another.
    package func records(of urls: [URL]) throws -> [[DownloadRecord]] {
        try urls.map { try records(of: $0) }
    }

    /// The rows among `ids` that exist; an unreadable one fails the read.
    package func records(withIDs ids: [DownloadID]) throws -> [DownloadRecord] {
        try records(withIDs: ids, skippingUnreadable: nil)
    }

    /// Every row, or those after `sequence`; an unreadable one fails the read.
    package func forEachRecord(after sequence: Int = 0, _ body: (DownloadRecord) throws -> Void) throws {
        try forEachRecord(after: sequence, skippingUnreadable: nil, body)
    }
}
