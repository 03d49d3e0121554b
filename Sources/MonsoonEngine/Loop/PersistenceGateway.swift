import FoundationEssentials
import Glibc
import MonsoonStore

/// The engine's way to the queue's store, on the transfer thread. It owns the `DiskWorker` (the
/// only one to read or write the database) and the bookkeeping around it: this turn's work for it
/// (handed over once per turn, in order), the last failure, the throttle on progress saves and the
/// checkpoints asked for, the rows read for a command, the restore (`RestoreReader`), the rows
/// adopted from the store through a sequence, and other processes' commands still to apply.
///
/// It decides and hands work to the disk worker; `EngineCore` routes what it answers to the other
/// parts (the records, the scheduler) and performs the commands.
struct PersistenceGateway {
    static let progressSaveInterval: TimeInterval = 1

    /// The queue is kept in a database (its connection is the disk worker's: this thread never
    /// reads it, not even to restore the queue).
    let persistent: Bool
    /// Saving, naming and opening part files, and every read of the store, off this thread.
    private let worker: DiskWorker
    private let inbox: EngineInbox
    /// Without a store, events go straight to their subscribers.
    private let hub: EventHub
    /// How often a running download's part is flushed for its checkpoint.
    private let checkpoint: EngineConfiguration.Checkpoint
    /// What this turn of the loop hands the disk worker (see `submit`).
    private var work: [DiskWorker.Work] = []
    /// Parts asked of the disk worker and not yet answered, by download (`SpaceGovernor.plannedStart` leaves
    /// those to the worker, in order after the answer, which may name the file).
    private var partsAsked: [DownloadID: Int] = [:]
    /// The last persistence failure, reported by `DownloadManager.persistenceError`.
    private(set) var storeError: Error?
    private var lastSaved: [DownloadID: Date] = [:]
    /// The highest sequence known from the store, so rows added by other processes are
    /// adopted exactly once.
    private(set) var adoptedThrough = 0
    /// The disk worker is restoring the queue (`requestRestore`): no transfer starts yet.
    private(set) var restoring = false
    /// Set at shutdown: a restore still reading stops at its next row (what it has not read stays
    /// in the database as it was, for the next run), so Ctrl-C never waits for a large queue.
    private let restoreStopped = Locked(false)
    /// Adoptions asked for while the restore ran (nil: none), done once after it: the restore's
    /// last sequence is not known before, and reading from 0 would read the whole queue a second time.
    private var adoptionsAfterRestore: [CommandReply<Void>]?
    /// Other processes' commands still to apply, oldest first, each batch with the seq it
    /// ends at (see `EngineLoop.apply(_:through:)`).
    private var commandBatches: [(commands: ArraySlice<DownloadCommand>, through: Int)] = []
    /// Rows a listing read (`keepListed`), for the commands right after it (`takeListed`): a `get`
    /// reads its URLs' rows, then retries some of them, which would read those rows a second time.
    private var listing = Listing()

    private struct Listing {
        /// The work handed to the disk worker that may write the store, counted: a row read when
        /// the count was N is still what this engine left in the store while it is N.
        var writesHanded = 0
        /// Dropped as soon as anything that may write is handed to the worker.
        var rows: [DownloadID: DownloadRecord] = [:]
        var readAt = Date.distantPast
    }

    /// How long a listing's rows are taken for the store's: other processes delete rows (`downloads
    /// clear`, a podcast forgotten) without telling the engine, so a row is taken only as fresh as
    /// a read just before the command's would be, give or take that.
    static let listingLifetime: TimeInterval = 0.5

    /// See `Listing.writesHanded`.
    var writesHanded: Int { listing.writesHanded }

    /// - Parameter store: the disk worker's connection to the queue's database, nil for a queue in memory.
    init(store: (any QueueStore)?, inbox: EngineInbox, hub: EventHub, checkpoint: EngineConfiguration.Checkpoint = .init()) {
        persistent = store != nil
        worker = DiskWorker(store: store, inbox: inbox, hub: hub)
        self.inbox = inbox
        self.hub = hub
        self.checkpoint = checkpoint
    }

    /// Without a store: the file paths downloads into folders have taken (see `DiskWorker.claimedPaths`).
    var claimedPaths: Locked<[String: DownloadID]> { worker.claimedPaths }

    /// The part says its origin too (for a run that finds it without its row): it says `record`'s
    /// URL from now on, written after the row that says so.
    mutating func relabelPart(of record: DownloadRecord, from old: String) {
        guard let path = record.filePath else { return }
        let (part, root, url) = (PartFile.path(for: path), record.request.root, record.request.url.absoluteString)
        hand(.job { _ in PartFile.relabel(part, from: old, to: url, root: root) })
    }

    /// Gives up a name a download held (without a store; with one, its row holds it).
    func releasePath(_ path: String, of id: DownloadID) {
        claimedPaths.withLock { if $0[path] == id { $0[path] = nil } }
    }

    mutating func hand(_ job: DiskWorker.Work) {
        work.append(job)
        switch job {
        case .publish, .then: break
        default:
            listing.writesHanded += 1
            if !listing.rows.isEmpty { listing.rows = [:] }
        }
    }

    /// Keeps the rows a listing read at `now`, when nothing that may write was handed to the worker
    /// after the read (`handedBefore`: `writesHanded` once the read was handed).
    mutating func keepListed(_ rows: [[DownloadRecord]], handedBefore: Int, now: Date) {
        guard handedBefore == listing.writesHanded, !restoring else { return }
        listing.rows = [:]
        for row in rows.joined() { listing.rows[row.request.id] = row }
        listing.readAt = now
    }

    /// The rows the last listing read for the downloads of `ids` not in memory, taken out of it,
    /// when it read them all and is still fresh; nil: they are to be read.
    mutating func takeListed(_ ids: [DownloadID], records: RecordTable, now: Date) -> [DownloadRecord]? {
        guard !listing.rows.isEmpty else { return nil }
        guard !restoring, now.timeIntervalSince(listing.readAt) <= Self.listingLifetime else {
            listing.rows = [:]
            return nil
        }
        let wanted = ids.filter { !records.isHot($0) }
        guard wanted.allSatisfy({ listing.rows[$0] != nil }) else { return nil }
        return wanted.compactMap { listing.rows.removeValue(forKey: $0) }
    }

    /// What was handed since the last take, in order; nil when nothing was.
    mutating func takeWork() -> [DiskWorker.Work]? {
        guard !work.isEmpty else { return nil }
        // A fresh array, not `removeAll(keepingCapacity:)`, which would hold a buffer as large
        // as the largest burst (4,000 enqueued downloads: 10 MB) for the rest of the run, and,
        // while a handed-off copy still shares it, allocate one that size again.
        defer { work = [] }
        return work
    }

    /// Hands this turn's work and `events` to the disk worker (the events after the rows they
    /// report), or sends the events straight away without a store.
    /// - Parameter then: run once all of it is done, with the first saving error since the last `then`.
    mutating func submit(_ events: [DownloadEvent]?, then: (@Sendable (Error?) -> Void)? = nil) {
        if let then { hand(.then(then)) }
        if let events {
            if persistent { hand(.publish(events)) } else { hub.send(events) }
        }
        if let work = takeWork() { worker.submit(work) }
    }

    /// Runs `read` on the disk worker (after everything handed to it before), then `body` on the
    /// transfer thread with its result, the core handed back by the inbox (the gateway never holds
    /// it); `ifClosed` instead once the engine has shut down. This thread never waits for the disk.
    mutating func onWorker<T: Sendable>(_ read: @escaping @Sendable ((any QueueStore)?) -> T, then body: @escaping @Sendable (EngineCore, T) -> Void,
                                        ifClosed: @escaping @Sendable () -> Void) {
        hand(.job { [inbox] store in
            let value = read(store)
            if !inbox.resume({ body($0, value) }) { ifClosed() }
        })
    }

    /// Reads from the store on the disk worker, then runs `body` with what it read; a failure is
    /// kept for `persistenceError` and is the answer ("could not `what`").
    mutating func read<Read: Sendable, T: Sendable>(_ read: @escaping @Sendable (any QueueStore) throws -> Read, failing what: String,
                                                   reply: CommandReply<T>, then body: @escaping @Sendable (EngineCore, Read) -> Void) {
        onWorker({ store in
            Result { () throws -> Read in
                guard let store else { throw DownloadError(.fileSystem, "no store") }
                return try read(store)
            }.mapError { ErrorBox(error: $0) }
        }, then: { loop, read in
            switch read {
            case .success(let value): body(loop, value)
            case .failure(let box):
                loop.persistence.failed(box.error)
                reply(loop, .failure(.storage("could not \(what)", cause: box.error)))
            }
        }, ifClosed: reply.shutDown)
    }

    /// Returns once everything submitted so far is done (at shutdown).
    func waitUntilDone() {
        worker.waitUntilDone()
    }

    /// Keeps `error` for `DownloadManager.persistenceError` (the last one wins).
    mutating func failed(_ error: Error) {
        storeError = error
    }

    /// Hands the disk worker `preparation` (a part to name and open) with this turn's work.
    mutating func askForPart(_ preparation: BodyPreparation) {
        hand(.prepare(preparation))
        partsAsked[preparation.row.request.id, default: 0] += 1
    }

    mutating func partAnswered(_ id: DownloadID) {
        guard let asked = partsAsked[id] else { return }
        partsAsked[id] = asked > 1 ? asked - 1 : nil
    }

    /// The name the disk worker gave row `sequence`'s part (`RecordTable.named`): saved, or the part
    /// deleted when the download went meanwhile (`stopped`: no attempt waits for it).
    mutating func named(_ sequence: Int, of id: DownloadID, _ outcome: BodyPreparation.Outcome, stopped: Bool, records: inout RecordTable) {
        guard let path = outcome.path else { return }
        let saved = if case .ready = outcome { true } else { false }
        switch records.named(id, sequence: sequence, path: path, saved: saved, stopped: stopped) {
        case .save: save(id, records: &records)
        case .orphan(let root):
            hand(.removeFiles([PartFile.path(for: path)], root: root, afterCommit: false))
            releasePath(path, of: id)
        case .kept: break
        }
    }

    /// Whether a part of `id` is still with the disk worker (a start is then left to it).
    func awaitsPart(_ id: DownloadID) -> Bool {
        partsAsked[id] != nil
    }

    /// Saves a download's whole state with the other saves of this turn. A record at rest leaves
    /// memory once its row is committed: what stays of a queued one is its index entry.
    mutating func save(_ id: DownloadID, records: inout RecordTable) {
        guard persistent, let record = records.hot[id] else { return }
        records.saving(id)
        // A completion is flushed with its commit, before it is reported (one flush for all
        // the rows of a batch): a file reported complete is in the database after a power cut.
        // So is a checkpoint's reset: new bytes must never meet the old checkpoint.
        hand(.save(record, durably: record.status == .completed || record.checkpointResetPending))
    }

    /// Saves a running download's progress at most once per `progressSaveInterval`, and asks for
    /// a flush of its part now and then so that a checkpoint (bytes known to be on disk) is saved.
    mutating func saveProgress(of record: DownloadRecord, _ transfer: Transfer, now: Date, placer: Placer) {
        guard persistent else { return }
        let id = record.request.id
        if progressSaveDue(id, now: now) {
            hand(.saveProgress(id: id, sequence: record.sequence, bytes: transfer.progress.fileSize, total: transfer.progress.total, checkpoint: record.checkpoint))
        }
        guard let length = checkpointDue(transfer.part, fileSize: transfer.progress.fileSize, now: now) else { return }
        let fd = fcntl(transfer.part.fd, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { return }
        let (epoch, attempt, inbox) = (record.partEpoch, ObjectIdentifier(transfer), inbox)
        transfer.part.checkpoint = PartCheckpoint(requested: length, requestedAt: now, inFlight: true)
        // The flushed length becomes the checkpoint when it lands, if the part was not restarted meanwhile.
        placer.flush(fd) { flushed in
            inbox.send(.checkpointFlushed(id, attempt: attempt, epoch: epoch, length: length, flushed: flushed))
        }
    }

    /// The length to flush for a checkpoint now (every few MiB or seconds, one at a time); nil: none is due.
    func checkpointDue(_ part: Transfer.Part, fileSize: Int, now: Date) -> Int? {
        let asked = part.checkpoint
        guard part.fd >= 0, fileSize > asked.requested, !asked.inFlight else { return nil }
        let due = fileSize - asked.requested >= checkpoint.bytes || now.timeIntervalSince(asked.requestedAt) >= checkpoint.seconds
        return due ? fileSize : nil
    }

    /// Whether `id`'s progress is to be saved now: at most once per `progressSaveInterval`.
    mutating func progressSaveDue(_ id: DownloadID, now: Date) -> Bool {
        guard now.timeIntervalSince(lastSaved[id] ?? .distantPast) >= Self.progressSaveInterval else { return false }
        lastSaved[id] = now
        return true
    }

    /// `id` left the queue: its next save, if it comes back, is not held back.
    mutating func forget(_ id: DownloadID) {
        lastSaved[id] = nil
    }

    /// A download is forgotten: out of `records`; its row deleted (unless `rowDeleted`, in the
    /// transaction that added its replacement), then its part, and its file if asked and complete.
    mutating func forget(_ record: DownloadRecord, deleteFiles: Bool, rowDeleted: Bool, records: inout RecordTable) {
        let id = record.request.id
        records.remove(id, sequence: record.sequence, deletionPending: persistent && !rowDeleted)
        forget(id)
        if persistent && !rowDeleted { hand(.delete(id, sequence: record.sequence)) }
        guard let path = record.filePath else { return }
        // After the row: a killed run never finds a row whose part it deleted.
        let paths = deleteFiles && record.status == .completed ? [PartFile.path(for: path), path] : [PartFile.path(for: path)]
        hand(.removeFiles(paths, root: record.request.root, afterCommit: !rowDeleted))
        releasePath(path, of: id)
    }

    /// The rows a command needs read before it runs (`EngineCore.withRows`): those not in memory
    /// (`missing`), and those in memory (`held`), pinned until it has run: a save confirmed meanwhile
    /// would let one at rest go, and its command would find no download.
    struct RowsToRead: Sendable {
        let missing: [DownloadID]
        let held: [DownloadID]
        /// Leave out a row that cannot be read rather than fail the read: for other processes'
        /// commands, where one damaged row must not hold back every command queued after it.
        let skippingUnreadable: Bool

        /// Disk worker.
        func read(_ store: (any QueueStore)?) -> Result<(rows: [DownloadRecord], unreadable: ErrorBox?), ErrorBox> {
            Result {
                var unreadable: ErrorBox?
                let rows = try store?.records(withIDs: missing, skippingUnreadable: skippingUnreadable ? { unreadable = ErrorBox(error: $0) } : nil) ?? []
                return (rows, unreadable)
            }.mapError { ErrorBox(error: $0) }
        }
    }

    /// What to read for a command on `ids`, pinning those in memory; nil: nothing, it runs now.
    func rowsToRead(_ ids: [DownloadID], skippingUnreadable: Bool, pinning records: inout RecordTable) -> RowsToRead? {
        var missing: [DownloadID] = []
        var held: [DownloadID] = []
        for id in ids { if !records.isHot(id) { missing.append(id) } else { held.append(id) } }
        // While the queue is restored, every command waits behind it on the worker.
        guard persistent, !missing.isEmpty || restoring else { return nil }
        for id in held { records.pin(id) }
        return RowsToRead(missing: missing, held: held, skippingUnreadable: skippingUnreadable)
    }

    /// Takes in what the disk worker read: a failed read, or a row left out of it, is kept for
    /// `persistenceError`; a failed one is the answer.
    mutating func took<Rows>(_ read: Result<(rows: Rows, unreadable: ErrorBox?), ErrorBox>) -> Result<Rows, DownloadManagerError> {
        if case .success(let read) = read, let box = read.unreadable { failed(box.error) }
        return read.map(\.rows).mapError { box in
            failed(box.error)
            return .storage("could not read the queue", cause: box.error)
        }
    }

    /// The command that `read` was for has run.
    func finished(_ read: RowsToRead, _ result: Result<Void, DownloadManagerError>, records: inout RecordTable) {
        if case .success = result { records.endPreload() }
        for id in read.held { records.unpin(id) }
    }

    /// Queues a batch of commands ending at `seq`.
    /// - Returns: whether it is the only one (applying starts now; otherwise it waits its turn).
    mutating func queueCommands(_ commands: [DownloadCommand], through seq: Int) -> Bool {
        commandBatches.append((commands[...], seq))
        return commandBatches.count == 1
    }

    /// The next commands to apply, at most `chunk` of them (a chunk's rows are held in memory
    /// while it is applied), with the downloads they name; nil when none are left.
    func nextCommands(chunk: Int = 500) -> (commands: ArraySlice<DownloadCommand>, ids: [DownloadID])? {
        guard let head = commandBatches.first?.commands.prefix(chunk) else { return nil }
        return (head, head.compactMap(\.download))
    }

    /// The first `count` commands of the oldest batch were applied; once all of that batch is,
    /// its commands are deleted from the store (on the disk worker, after the rows they changed).
    /// - Returns: the seq the batch deleted ends at.
    @discardableResult
    mutating func applied(_ count: Int) -> Int? {
        guard !commandBatches.isEmpty else { return nil }
        commandBatches[0].commands = commandBatches[0].commands.dropFirst(count)
        guard commandBatches[0].commands.isEmpty else { return nil }
        let seq = commandBatches.removeFirst().through
        let inbox = inbox
        hand(.job { store in
            do {
                try store?.deleteCommands(through: seq)
            } catch {
                // Kept for persistenceError; applied again at the next look, which is harmless
                // for these commands (each brings its download to a state, not a step).
                inbox.send(.storeFailed(ErrorBox(error: error)))
            }
        })
        return seq
    }
}

/// Getting the queue back: the restore, and the rows other processes add, each taken in once.
extension PersistenceGateway {
    /// Has the disk worker load the queue as it was left: downloading becomes queued again (its
    /// part resumes with Range), waiting-to-retry keeps its time, the rest stay as they are.
    /// Its first work: commands posted meanwhile read their rows after it (`rowsToRead`), and no
    /// transfer starts until it has answered (`restoring`), while fetches go on once curl has loaded.
    mutating func requestRestore() {
        restoring = true
        let (stopped, inbox) = (restoreStopped, inbox)
        hand(.job { store in
            guard let store else { return }
            RestoreReader.restore(from: store) { !stopped.withLock { $0 } && inbox.send(.restored($0)) }
        })
    }

    /// `requestRestore`, handed to the worker at once, as the engine starts: curl loads meanwhile,
    /// and the loop takes the answers as they come (only its turns wait for curl).
    mutating func startRestore() {
        requestRestore()
        submit(nil)
    }

    /// Shutdown: a restore still reading stops at its next row.
    func stopRestore() {
        restoreStopped.withLock { $0 = true }
    }

    /// What the loop does with one of the restore's answers: take in rows (none in memory), or, at
    /// the end, note the sequences taken and, for the adoptions asked for meanwhile, read the rows added since.
    enum RestoreStep {
        case adopt([RestoreReader.Row])
        /// `readAll`: every row was read (false: the read failed part way; what it did not reach stays in the store).
        case done(nextSequence: Int, adoptions: [CommandReply<Void>]?, readAll: Bool)
    }

    mutating func restored(_ message: RestoreReader.Message, records: RecordTable) -> RestoreStep? {
        switch message {
        case .rows(let rows):
            // Nothing of these is in memory yet: every command reads its rows after the restore.
            let fresh = rows.filter { !records.isHot($0.stored.request.id) }
            for row in fresh { adopted(through: row.stored.sequence) }
            return .adopt(fresh)
        case .problem(let box):
            failed(box.error)
            return nil
        case .done(let next, let seenThrough):
            if let seenThrough { adopted(through: seenThrough) }
            restoring = false
            defer { adoptionsAfterRestore = nil }
            return .done(nextSequence: next ?? 0, adoptions: adoptionsAfterRestore, readAll: seenThrough != nil)
        }
    }

    /// Takes a stored download into `records` as its part says it is (`inspected`), saving it
    /// again when that changed it, else letting it go once at rest, and into the `scheduler`'s
    /// line or wait. (Only with a store.)
    /// - Returns: the record taken in.
    @discardableResult
    mutating func adopt(_ row: RestoreReader.Row, into records: inout RecordTable, scheduler: inout DownloadScheduler) -> DownloadRecord {
        let record = row.inspected
        let id = record.request.id
        records[id] = record
        if record.status != row.stored.status || record.bytes != row.stored.bytes { save(id, records: &records) } else { records.evictIfAtRest(id) }
        records.numbered(through: record.sequence)
        scheduler.adopt(record)
        return record
    }

    mutating func adopted(through sequence: Int) {
        adoptedThrough = max(adoptedThrough, sequence)
    }

    /// Of rows another process added, those to take in: each once (past the last one known), and
    /// none already in memory.
    mutating func unseen(_ rows: [RestoreReader.Row], records: RecordTable) -> [RestoreReader.Row] {
        var fresh: [RestoreReader.Row] = []
        for row in rows where row.stored.sequence > adoptedThrough {
            if !records.isHot(row.stored.request.id) { fresh.append(row) }
            adopted(through: row.stored.sequence)
        }
        return fresh
    }

    /// Where to read the rows other processes added from, for `replies`; nil while the queue is
    /// restored (they are answered after it, `RestoreStep.done`).
    mutating func newRowsToRead(replying replies: [CommandReply<Void>]) -> Int? {
        guard !restoring else {
            adoptionsAfterRestore = (adoptionsAfterRestore ?? []) + replies
            return nil
        }
        return adoptedThrough
    }

}
