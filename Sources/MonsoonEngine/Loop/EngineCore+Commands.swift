import Foundation
import MonsoonStore

/// The manager's commands, performed on the transfer thread.
extension EngineCore {
    /// Carries out a user's command as the lifecycle decides it for the download as it is.
    @discardableResult
    func perform(_ command: DownloadLifecycle.Command, on id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        switch DownloadLifecycle.command(command, status: record.status, placing: record.placing) {
        case .none:
            // Resumed or retried while waiting for room: the user asks for it now (the start checks the room).
            if let hold = space.holds.removeValue(forKey: id) { scheduler.line(id, key: hold.key, hosts: hold.hosts) }
        case .pause:
            stopTransfer(id)
            move(id, .pause)
        case .queue(let liftHostHold):
            if liftHostHold { scheduler.lift(scheduler.hostPair(of: record)) }
            requeueFresh(id)
        case .fetchAgain:
            if let path = records.startOver(id) { persistence.releasePath(path, of: id) }
            move(id, .requeue)
        }
        return .success(())
    }

    /// Retries a failed or waiting download now; a completed one whose file has gone is fetched again.
    func retry(_ id: DownloadID, reply: CommandReply<Void>) {
        guard let record = records[id] else { return reply(self, .failure(.notFound(id))) }
        guard record.status == .completed, let path = record.filePath else { return reply(self, perform(.retry(fileGone: false), on: id)) }
        // Kept in memory while the disk worker looks: a removal meanwhile is then seen.
        records[id] = record
        records.hold(id)
        persistence.onWorker({ _ in !PartFile.exists(path) }, then: { loop, gone in
            if loop.records.isHot(id) { loop.perform(.retry(fileGone: gone), on: id) }
            loop.records.letGo(id)
            reply(loop, .success(()))
        }, ifClosed: reply.shutDown)
    }

    /// Lets a `.claimedOnly` engine start these downloads for `claimant` (`DownloadScheduler.claim`).
    func claim(_ ids: [DownloadID], by claimant: Int32 = ownClaim) -> Result<Void, DownloadManagerError> {
        guard scheduler.claimed != nil else { return .success(()) }
        for id in ids {
            guard let record = records[id] else { continue }
            if scheduler.claim(record, by: claimant, held: space.holds[id] != nil) { records[id] = record }
        }
        return .success(())
    }

    /// `claimant` no longer wants the download: when nobody does, a running transfer stops,
    /// keeping its part, and the download stays queued for a later run.
    func release(_ id: DownloadID, by claimant: Int32) {
        switch scheduler.release(id, by: claimant, record: records[id]) {
        case .downloading?:
            stopTransfer(id)
            move(id, .requeue)
        case .queued?:
            space.holds[id] = nil
        default:
            break
        }
    }

    /// Pauses every download that would run (with `.claimedOnly`, also those only in the store); one
    /// removed meanwhile answers `.notFound`, ignored: nothing left to pause.
    func pauseAll(reply: CommandReply<Void>) {
        var active = Set(scheduler.queue.entries.map(\.id)).union(scheduler.waiting).union(scheduler.starting.keys).union(space.holds.keys)
        active.formUnion(records.hot.values.filter { $0.status == .downloading }.map(\.request.id))
        let stored: [DownloadStatus] = scheduler.claimed != nil ? [.queued, .waitingToRetry, .downloading] : []
        forAll(active, andStored: stored, failing: "pause every download", { loop, id in loop.perform(.pause, on: id) }, reply: reply)
    }

    /// Queues every paused download again.
    func resumeAll(reply: CommandReply<Void>) {
        let paused = Set(records.hot.values.filter { $0.status == .paused }.map(\.request.id))
        forAll(paused, andStored: [.paused], failing: "resume every paused download", { loop, id in loop.perform(.resume, on: id) }, reply: reply)
    }

    /// Applies `body` to `ids` and, with a store, to the downloads whose rows have one of
    /// `statuses`, in order of id.
    private func forAll(_ ids: Set<DownloadID>, andStored statuses: [DownloadStatus], failing what: String,
                        _ body: @escaping @Sendable (EngineCore, DownloadID) -> Void, reply: CommandReply<Void>) {
        guard persistence.persistent, !statuses.isEmpty else { return forEach(Array(ids), body, reply: reply) }
        reading({ store in try statuses.flatMap { try store.ids(withStatus: $0) } }, failing: what, reply: reply) { loop, found in
            loop.forEach(ids.union(found).sorted(), body, reply: reply)
        }
    }

    /// Applies `body` to each of `ids`, with their records read a chunk at a time (so a large
    /// queue is never all in memory), then replies.
    private func forEach(_ ids: [DownloadID], chunk: Int = 500, _ body: @escaping @Sendable (EngineCore, DownloadID) -> Void, reply: CommandReply<Void>) {
        guard !ids.isEmpty else { return reply(self, .success(())) }
        let head = Array(ids.prefix(chunk))
        withRows(head, ifClosed: reply.shutDown) { loop, read in
            if case .failure(let error) = read { return reply(loop, .failure(error)) }
            for id in head { body(loop, id) }
            loop.forEach(Array(ids.dropFirst(chunk)), chunk: chunk, body, reply: reply)
        }
    }

    func setPriority(_ priority: Int, for id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard let before = records[id], let record = records.update(id, { $0.request.priority = priority; return $0 }) else { return .failure(.notFound(id)) }
        space.holds[id] = nil   // queued again under its new priority: the start checks the room
        if before.status == .queued && scheduler.runs(id) { scheduler.reline(id, from: before, to: record) }
        persist(id)
        return .success(())
    }

    func setLimits(maxConcurrent: Int?, perHost: Int??) {
        configuration.setLimits(maxConcurrent: maxConcurrent, perHost: perHost)
        scheduler.needsScheduling = true
    }

    func remove(_ id: DownloadID, deleteFile: Bool) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        // The rename is under way off this thread: the removal is finished when it lands.
        if record.placing, case .deferred? = handle(id, .removeRequested(deleteFile: deleteFile)) { return .success(()) }
        if let record = records[id] { forget(record, deleteFiles: deleteFile) }   // as it is after that answer
        return .success(())
    }

    /// Stops and forgets a download as `record` describes it (`PersistenceGateway.forget`).
    func forget(_ record: DownloadRecord, deleteFiles: Bool, rowDeleted: Bool = false) {
        let id = record.request.id
        stopTransfer(id)
        placements.abandon(id)
        scheduler.forget(record)
        space.holds[id] = nil
        persistence.forget(record, deleteFiles: deleteFiles, rowDeleted: rowDeleted, records: &records)
        emit(.removed(id))
    }

    /// The downloads of each URL, in enqueue order.
    func downloads(of urls: [URL], reply: CommandReply<[[Download]]>) {
        answer({ $0.downloads(of: urls) }, reading: { try $0.records(of: urls) }, then: { $0.current($1) }, reply: reply)
    }

    /// How many downloads are in each status.
    func counts(reply: CommandReply<[DownloadStatus: Int]>) {
        answer(\.counts, reading: { try $0.counts() }, then: { $1 }, reply: reply)
    }

    /// Every download, in enqueue order.
    func snapshots(reply: CommandReply<[Download]>) {
        // Each row becomes its (smaller) value as it is read: a large queue is in memory once.
        answer(\.snapshots, reading: { store in
            var downloads: [Download] = []
            try store.forEachRecord { downloads.append($0.snapshot()) }
            return downloads
        }, then: { $0.current($1) }, reply: reply)
    }

    /// Answers from the records in memory without a store; with one, from rows the disk worker
    /// reads, shaped here with the busy records as they are in memory.
    private func answer<Read: Sendable, T: Sendable>(_ inMemory: (RecordTable) -> T, reading read: @escaping @Sendable (any QueueStore) throws -> Read,
                                                     then shape: @escaping @Sendable (RecordTable, Read) -> T, reply: CommandReply<T>) {
        guard persistence.persistent else { return reply(self, .success(inMemory(records))) }
        reading(read, failing: "read the queue", reply: reply) { loop, value in reply(loop, .success(shape(loop.records, value))) }
    }

    /// Reads from the store on the disk worker, then runs `body` with what it read; a failure is
    /// kept for `persistenceError` and is the answer ("could not `what`").
    private func reading<Read: Sendable, T: Sendable>(_ read: @escaping @Sendable (any QueueStore) throws -> Read, failing what: String,
                                                      reply: CommandReply<T>, then body: @escaping @Sendable (EngineCore, Read) -> Void) {
        persistence.onWorker({ store in
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
}
