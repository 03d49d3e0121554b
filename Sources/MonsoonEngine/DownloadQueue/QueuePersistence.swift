import FoundationEssentials

/// The engine's rows, as its transfer thread and disk worker write and read them back (see
/// `QueueStore` for what every part of the queue's interface promises).
///
/// - Important: confined to one thread at a time, like a database connection.
package protocol QueuePersistence: AnyObject {
    /// Inserts a new download at `record.sequence` (0: the next one); returns its sequence number.
    func insert(_ record: DownloadRecord) throws -> Int
    /// Writes a download's state (everything but its identity and request; its URL when it changed).
    func update(_ record: DownloadRecord) throws
    /// Saves progress: bytes in the part and, after an fsync, the checkpoint.
    func updateProgress(id: DownloadID, sequence: Int, bytes: Int, total: Int?, checkpoint: Int?) throws
    /// Deletes one download's row, if it still has this sequence number.
    func delete(_ id: DownloadID, sequence: Int) throws
    /// The rows among `ids` that exist, in enqueue order.
    /// - Parameter skippingUnreadable: given, a row that cannot be read goes to it and is left
    ///   out instead of failing the whole read.
    func records(withIDs ids: [DownloadID], skippingUnreadable: ((Error) -> Void)?) throws -> [DownloadRecord]
    /// The rows of downloads of each of `urls`, in enqueue order.
    func records(of urls: [URL]) throws -> [[DownloadRecord]]
    /// Streams the rows whose sequence number is above `sequence` (0: all), in enqueue order,
    /// so a large queue is never all in memory. An unreadable row goes to `skippingUnreadable`
    /// when given, else throws.
    func forEachRecord(after sequence: Int, skippingUnreadable: ((Error) -> Void)?, _ body: (DownloadRecord) throws -> Void) throws
    /// `forEachRecord`, of the downloads not completed only: what a restore needs (a completed one
    /// is at rest, and a command that needs its row reads it).
    func forEachUnfinishedRecord(skippingUnreadable: ((Error) -> Void)?, _ body: (DownloadRecord) throws -> Void) throws
    /// The unfinished download whose file is `path`, if any.
    func owner(ofPath path: String) throws -> DownloadID?
    /// The ids of the downloads in `status`, in enqueue order.
    func ids(withStatus status: DownloadStatus) throws -> [DownloadID]
    /// The next sequence number an insert would give.
    func nextSequence() throws -> Int
    /// Runs `body` as one transaction; `durably`, its commit survives a power cut.
    func transaction<T>(durably: Bool, _ body: () throws -> T) throws -> T
}

extension QueuePersistence {
    /// `transaction(durably: false, body)`: a crash loses none of its commits, a power cut
    /// may lose the last few, which only rolls state back.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try transaction(durably: false, body)
    }

    /// One download's row, by id.
    package func record(withID id: DownloadID) throws -> DownloadRecord? {
        try records(withIDs: [id], skippingUnreadable: nil).first
    }

    /// The rows of downloads of `url`, in enqueue order.
    package func records(of url: URL) throws -> [DownloadRecord] {
        try records(of: [url]).first ?? []
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
