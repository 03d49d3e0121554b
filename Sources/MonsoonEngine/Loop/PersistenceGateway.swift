import Foundation

/// The engine's bookkeeping with the queue's store, on the transfer thread: this turn's work for
/// the disk worker (handed over once per turn, in order), the last failure, when each running
/// download's progress was last saved (saves are throttled), the highest sequence adopted from
/// the store (rows other processes add are taken in exactly once), whether the queue is being
/// restored and the adoptions waiting for that, and other processes' commands still to apply, in the order they were posted.
///
/// It only decides; `EngineCore` reads the rows and performs the commands it hands back.
struct PersistenceGateway {
    typealias AdoptionDone = @Sendable (EngineCore, Result<Void, DownloadManagerError>) -> Void

    static let progressSaveInterval: TimeInterval = 1

    /// The queue is kept in a database (its connection is the disk worker's: this thread never
    /// reads it, not even to restore the queue).
    let persistent: Bool
    /// What this turn of the loop hands the disk worker (see `EngineCore.submitWork`).
    private var work: [DiskWorker.Work] = []
    /// Parts asked of the disk worker and not yet answered, by download (`SpaceGovernor.plannedStart` leaves
    /// those to the worker, in order after the answer, which may name the file).
    private var partsAsked: [DownloadID: Int] = [:]
    /// The last persistence failure, reported by `DownloadManager.persistenceError`.
    private(set) var storeError: Error?
    /// When each running download's progress was last saved.
    private var lastSaved: [DownloadID: Date] = [:]
    /// The highest sequence known from the store, so rows added by other processes are
    /// adopted exactly once.
    private(set) var adoptedThrough = 0
    /// The disk worker is restoring the queue (`EngineCore.requestRestore`): no transfer starts yet.
    private(set) var restoring = false
    /// Set at shutdown: a restore still reading stops at its next row (what it has not read stays
    /// in the database as it was, for the next run), so Ctrl-C never waits for a large queue.
    private let restoreStopped = Locked(false)
    /// Adoptions asked for while the restore ran, done once after it: the restore's last sequence
    /// is not known before, and reading from 0 would read the whole queue a second time.
    private var adoptionsAfterRestore: [AdoptionDone] = []
    /// Other processes' commands still to apply, oldest first, each batch with the seq it
    /// ends at (see `EngineCore.apply(_:through:)`).
    private var commandBatches: [(commands: ArraySlice<DownloadCommand>, through: Int)] = []

    init(persistent: Bool) {
        self.persistent = persistent
    }

    // MARK: - This turn's work

    mutating func hand(_ job: DiskWorker.Work) {
        work.append(job)
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

    /// Keeps `error` for `DownloadManager.persistenceError` (the last one wins).
    mutating func failed(_ error: Error) {
        storeError = error
    }

    // MARK: - Parts

    /// Hands the disk worker `preparation` (a part to name and open) with this turn's work.
    mutating func askForPart(_ preparation: BodyPreparation) {
        work.append(.prepare(preparation))
        partsAsked[preparation.row.request.id, default: 0] += 1
    }

    /// The disk worker answered one of `id`'s parts.
    mutating func partAnswered(_ id: DownloadID) {
        guard let asked = partsAsked[id] else { return }
        partsAsked[id] = asked > 1 ? asked - 1 : nil
    }

    /// Whether a part of `id` is still with the disk worker (a start is then left to it).
    func awaitsPart(_ id: DownloadID) -> Bool {
        partsAsked[id] != nil
    }

    // MARK: - Saves

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

    // MARK: - Adoption

    /// Whether the row at `sequence` is past every one taken in so far.
    func isNew(_ sequence: Int) -> Bool {
        sequence > adoptedThrough
    }

    mutating func adopted(through sequence: Int) {
        adoptedThrough = max(adoptedThrough, sequence)
    }

    mutating func adoptAfterRestore(_ done: @escaping AdoptionDone) {
        adoptionsAfterRestore.append(done)
    }

    // MARK: - Restore

    /// The restore begins: no transfer starts until `restoreEnded`.
    /// - Returns: whether the restore is to stop (the engine is shutting down), asked by the disk
    ///   worker at each row.
    mutating func restoreStarted() -> @Sendable () -> Bool {
        restoring = true
        let stopped = restoreStopped
        return { stopped.withLock { $0 } }
    }

    /// Shutdown: a restore still reading stops at its next row.
    func stopRestore() {
        restoreStopped.withLock { $0 = true }
    }

    /// Every row is in.
    /// - Returns: the adoptions asked for meanwhile, each handed out once.
    mutating func restoreEnded() -> [AdoptionDone] {
        restoring = false
        defer { adoptionsAfterRestore = [] }
        return adoptionsAfterRestore
    }

    // MARK: - Other processes' commands

    /// Queues a batch of commands ending at `seq`.
    /// - Returns: whether it is the only one (applying starts now; otherwise it waits its turn).
    mutating func queueCommands(_ commands: [DownloadCommand], through seq: Int) -> Bool {
        commandBatches.append((commands[...], seq))
        return commandBatches.count == 1
    }

    /// The next commands to apply, at most `chunk` of them; nil when none are left.
    func nextCommands(chunk: Int) -> ArraySlice<DownloadCommand>? {
        commandBatches.first.map { $0.commands.prefix(chunk) }
    }

    /// The first `count` commands of the oldest batch were applied.
    /// - Returns: the seq that batch ends at once all of it is applied (its commands can be deleted).
    mutating func applied(_ count: Int) -> Int? {
        guard !commandBatches.isEmpty else { return nil }
        commandBatches[0].commands = commandBatches[0].commands.dropFirst(count)
        guard commandBatches[0].commands.isEmpty else { return nil }
        return commandBatches.removeFirst().through
    }
}
