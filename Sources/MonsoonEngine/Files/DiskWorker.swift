import FoundationEssentials

/// The engine's work that may block on a disk or the database, done off the transfer thread:
/// saving rows (many in one transaction: group commit), naming and opening part files when a
/// download's first body byte arrives, and publishing events once the rows they report are saved.
///
/// One serial queue does it all, in the order the loop submitted it, so a row is never
/// overwritten by an older one and an event never runs ahead of its row. Answers go back
/// to the loop through its inbox.
final class DiskWorker: Sendable {
    indirect enum Work: Sendable {
        /// Saves a download's whole row; `durably`: flushed to disk with its commit (a download
        /// reported complete must still be so after a power cut).
        case save(DownloadRecord, durably: Bool)
        /// Saves a running download's progress (and its checkpoint, when known).
        case saveProgress(id: DownloadID, sequence: Int, bytes: Int, total: Int?, checkpoint: Int?)
        /// Plans an attempt from the part on disk (reading the row first when asked).
        case prepareStart(StartPreparation)
        /// Names the file if it has no name yet, checks space, saves the row, opens the part.
        case prepare(BodyPreparation)
        /// Writes a whole small file in one pass, and saves its row as completed (`WholeFile`).
        case writeWhole(WholeFile)
        /// Deletes a download's row (that instance of it: a row added again under the same id stays).
        case delete(DownloadID, sequence: Int)
        /// Deletes files: in order with the rest (a part started over, before the next attempt
        /// looks at it), or once the run's rows are committed (a removed download's, after its row).
        /// `root`: the downloads' (`DownloadRequest.root`), below which no link is followed.
        case removeFiles([String], root: String?, afterCommit: Bool)
        /// Runs with the store's connection (nil without one), after everything before it is
        /// saved and outside any transaction: a read for the loop, or a write in its own transaction.
        case job(@Sendable ((any QueueStore)?) -> Void)
        /// Sends events once what came before them is saved.
        case publish([DownloadEvent])
        /// Runs once everything before it is saved, with the first saving error since the last `then`.
        case then(@Sendable (Error?) -> Void)
    }

    /// The store's connection, used on the worker's queue alone.
    final class Connection: @unchecked Sendable {
        // Safe: only ever touched from the worker's serial queue (and released with the worker).
        let store: (any QueueStore)?
        private var identity: String?
        init(_ store: (any QueueStore)?) { self.store = store }

        /// The queue's identity (`WholeFile.owner`), made the first time; nil without a store, or
        /// when it cannot be read or made (files are then not tagged: a killed run may leave a
        /// duplicate, never lose one).
        func queueIdentity() -> String? {
            if let identity { return identity }
            guard let store else { return nil }
            do {
                // Made once per queue; a worker of the same queue that made it first is not overruled.
                identity = try store.meta(WholeFile.queueIdentityKey) ?? store.meta(WholeFile.queueIdentityKey, orSet: UUID().uuidString)
            } catch {
                return nil   // only the tag is lost (see above); asked again next time
            }
            return identity
        }
    }

    private let queue: BatchingQueue<Work>
    /// Without a store: the file paths downloads into folders have taken and not yet given up
    /// (with a store, the rows say so), so two never share a name.
    let claimedPaths: Locked<[String: DownloadID]>

    init(store: (any QueueStore)?, inbox: EngineInbox, hub: EventHub) {
        let drainer = Drainer(connection: Connection(store), inbox: inbox, hub: hub)
        claimedPaths = drainer.claimedPaths
        queue = BatchingQueue(label: "monsoon.disk") { drainer.drain($0) }
    }

    /// Queues work, in order after everything submitted before.
    func submit(_ items: [Work]) {
        queue.submit(items)
    }

    /// Returns once everything submitted so far is done (at shutdown).
    func waitUntilDone() {
        queue.waitUntilDone()
    }
}
