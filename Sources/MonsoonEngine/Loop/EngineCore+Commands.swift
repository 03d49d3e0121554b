import Foundation
import MonsoonStore

/// The manager's commands, performed on the transfer thread.
extension EngineCore {
    /// Gives up a name a download held (without a store; with one, its row holds it).
    func releasePath(_ path: String, of id: DownloadID) {
        persistence.claimedPaths.withLock { if $0[path] == id { $0[path] = nil } }
    }

    func pause(_ id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        perform(DownloadLifecycle.command(.pause, status: record.status, placing: record.placing), for: id)
        return .success(())
    }

    func resume(_ id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        perform(DownloadLifecycle.command(.resume, status: record.status, placing: record.placing), for: id)
        return .success(())
    }

    /// Carries out what the lifecycle decided for a command.
    private func perform(_ outcome: DownloadLifecycle.CommandOutcome, for id: DownloadID) {
        guard let record = records[id] else { return }
        switch outcome {
        case .none:
            // Resumed or retried while waiting for room: the user asks for it now.
            if space.holds[id] != nil { letGoOfSpaceHold(id) }
        case .pause:
            stopTransfer(id)
            move(id, .pause)
        case .queue(let liftHostHold):
            records.update(id) { $0.counters = RetryPolicy.Counters() }
            handle(id, .restartsForgotten)
            if liftHostHold { scheduler.lift(hostPair(of: record)) }
            move(id, .requeue)
        case .fetchAgain:
            var again = record
            again.bytes = 0
            again.resume = nil
            // Into a folder, the name is chosen again: with the file gone, the plain
            // name is usually free once more (no " (2)" left over from a clash).
            if case .file = record.request.destination {} else if let path = record.filePath {
                again.filePath = nil
                releasePath(path, of: id)
            }
            records[id] = again
            move(id, .requeue)
        }
    }

    /// Retry a failed download, or one waiting to retry, now; a completed one whose file has
    /// gone is fetched again (the disk worker looks).
    func retry(_ id: DownloadID, reply: CommandReply<Void>) {
        guard let record = records[id] else { return reply(self, .failure(.notFound(id))) }
        guard record.status == .completed, let path = record.filePath else {
            perform(DownloadLifecycle.command(.retry(fileGone: false), status: record.status, placing: record.placing), for: id)
            return reply(self, .success(()))
        }
        // Kept in memory while the disk worker looks: a removal meanwhile is then seen.
        records[id] = record
        records.hold(id)
        persistence.onWorker({ _ in !PartFile.exists(path) }, then: { loop, gone in
            if let current = loop.records.hot[id] {
                loop.perform(DownloadLifecycle.command(.retry(fileGone: gone), status: current.status, placing: current.placing), for: id)
            }
            loop.records.letGo(id)
            reply(loop, .success(()))
        }, ifClosed: reply.shutDown)
    }

    /// Lets a `.claimedOnly` engine start these downloads for `claimant` (a no-op for
    /// `.wholeQueue`): queued ones join the queue, those waiting to retry keep their time.
    func claim(_ ids: [DownloadID], by claimant: Int32 = ownClaim) -> Result<Void, DownloadManagerError> {
        guard scheduler.claimed != nil else { return .success(()) }
        for id in ids {
            guard let record = records[id] else { continue }
            let wasClaimed = scheduler.claimed?[id] != nil
            scheduler.claimed?[id, default: []].insert(claimant)
            guard !wasClaimed else { continue }
            switch record.status {
            case .queued:
                // One waiting for room stays held until its disk has it.
                guard space.holds[id] == nil else { continue }
                scheduler.queue.insert(id, key: record.queueKey, hosts: hostPair(of: record))
                scheduler.needsScheduling = true
            case .waitingToRetry:
                records[id] = record   // kept in memory: the waiting set reads its retry time
                scheduler.wait(id, until: record.retryAt)
            case .downloading, .paused, .completed, .failed:
                break
            }
        }
        return .success(())
    }

    /// `claimant` no longer wants the download (a no-op for `.wholeQueue`). When nobody
    /// does any more, a running transfer stops, keeping its part, and the download stays
    /// queued for a later run.
    func release(_ id: DownloadID, by claimant: Int32) {
        guard var claimants = scheduler.claimed?[id], claimants.remove(claimant) != nil else { return }
        guard claimants.isEmpty else {
            scheduler.claimed?[id] = claimants
            return
        }
        guard let record = records[id], !record.placing else { return }   // a file being placed lands
        scheduler.claimed?[id] = nil
        switch record.status {
        case .downloading:
            stopTransfer(id)
            move(id, .requeue)
        case .queued:
            scheduler.queue.remove(key: record.queueKey)
            space.holds[id] = nil
        case .waitingToRetry:
            scheduler.stopWaiting(id)
        case .paused, .completed, .failed:
            break
        }
    }

    /// Pauses every download that would run (with `.claimedOnly`, also those only in the store).
    /// A download removed meanwhile answers `.notFound`, its only failure: nothing left to pause.
    func pauseAll(reply: CommandReply<Void>) {
        var active = Set(scheduler.queue.entries.map(\.id)).union(scheduler.waiting).union(scheduler.starting.keys).union(space.holds.keys)
        active.formUnion(records.hot.values.filter { $0.status == .downloading }.map(\.request.id))
        guard persistence.persistent, scheduler.claimed != nil else {
            return forEach(Array(active), { loop, id in _ = loop.pause(id) }, done: { loop, result in reply(loop, result) }, ifClosed: reply.shutDown)
        }
        persistence.onWorker({ store in
            Result { try [DownloadStatus.queued, .waitingToRetry, .downloading].flatMap { try store?.ids(withStatus: $0) ?? [] } }.mapError { ErrorBox(error: $0) }
        }, then: { [active] loop, stored in
            switch stored {
            case .success(let ids):
                let all = active.union(ids).sorted()
                loop.forEach(all, { loop, id in _ = loop.pause(id) }, done: { loop, result in reply(loop, result) }, ifClosed: reply.shutDown)
            case .failure(let box):
                loop.persistence.failed(box.error)
                reply(loop, .failure(.storage("could not pause every download", cause: box.error)))
            }
        }, ifClosed: reply.shutDown)
    }

    /// Queues every paused download again.
    func resumeAll(reply: CommandReply<Void>) {
        let paused = Set(records.hot.values.filter { $0.status == .paused }.map(\.request.id))
        guard persistence.persistent else {
            return forEach(Array(paused), { loop, id in _ = loop.resume(id) }, done: { loop, result in reply(loop, result) }, ifClosed: reply.shutDown)
        }
        persistence.onWorker({ store in
            Result { try store?.ids(withStatus: .paused) ?? [] }.mapError { ErrorBox(error: $0) }
        }, then: { loop, stored in
            switch stored {
            case .success(let ids):
                loop.forEach(paused.union(ids).sorted(), { loop, id in _ = loop.resume(id) }, done: { loop, result in reply(loop, result) }, ifClosed: reply.shutDown)
            case .failure(let box):
                loop.persistence.failed(box.error)
                reply(loop, .failure(.storage("could not resume every paused download", cause: box.error)))
            }
        }, ifClosed: reply.shutDown)
    }

    /// Applies `body` to each of `ids`, with their records read a chunk at a time (so a large
    /// queue is never all in memory), then `done`.
    func forEach(_ ids: [DownloadID], chunk: Int = 500, _ body: @escaping @Sendable (EngineCore, DownloadID) -> Void,
                 done: @escaping @Sendable (EngineCore, Result<Void, DownloadManagerError>) -> Void, ifClosed: @escaping @Sendable () -> Void) {
        guard !ids.isEmpty else { return done(self, .success(())) }
        let head = Array(ids.prefix(chunk))
        let rest = Array(ids.dropFirst(chunk))
        withRows(head, ifClosed: ifClosed) { loop, read in
            if case .failure(let error) = read { return done(loop, .failure(error)) }
            for id in head { body(loop, id) }
            loop.forEach(rest, chunk: chunk, body, done: done, ifClosed: ifClosed)
        }
    }

    func setPriority(_ priority: Int, for id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard var record = records[id] else { return .failure(.notFound(id)) }
        let wasQueued = record.status == .queued && runs(id)
        // Waiting for room, it is queued again under its new priority: the start checks the room.
        space.holds[id] = nil
        if wasQueued { scheduler.queue.remove(key: record.queueKey) }
        record.request.priority = priority
        records[id] = record
        if wasQueued {
            scheduler.queue.insert(id, key: record.queueKey, hosts: hostPair(of: record))
            scheduler.needsScheduling = true
        }
        persist(id)
        return .success(())
    }

    func setLimits(maxConcurrent: Int?, perHost: Int??) {
        if let maxConcurrent { configuration.maxConcurrentDownloads = EngineConfiguration.concurrency(maxConcurrent) }
        if let perHost { configuration.maxDownloadsPerHost = perHost.map { max(1, $0) } }
        scheduler.needsScheduling = true
    }

    func remove(_ id: DownloadID, deleteFile: Bool) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        // The rename is under way off this thread: the removal is finished when it lands.
        if record.placing, case .deferred? = handle(id, .removeRequested(deleteFile: deleteFile)) { return .success(()) }
        stopAndForget(id, deleteFiles: deleteFile)
        return .success(())
    }

    /// Stops any transfer, deletes the part (and the finished file if asked), forgets the record.
    func stopAndForget(_ id: DownloadID, deleteFiles: Bool) {
        guard let record = records[id] else { return }
        forget(record, deleteFiles: deleteFiles, rowDeleted: false)
    }

    /// Stops and forgets a download as `record` describes it. `rowDeleted`: its row is gone
    /// already (deleted in the transaction that added its replacement).
    func forget(_ record: DownloadRecord, deleteFiles: Bool, rowDeleted: Bool) {
        let id = record.request.id
        stopTransfer(id)
        placements.abandon(id)
        scheduler.releaseStartingSlot(id)
        if record.status == .queued { scheduler.queue.remove(key: record.queueKey) }
        scheduler.stopWaiting(id)
        space.holds[id] = nil
        records.remove(id, sequence: record.sequence, deletionPending: persistence.persistent && !rowDeleted)
        scheduler.claimed?[id] = nil
        persistence.forget(id)
        if persistence.persistent && !rowDeleted { persistence.hand(.delete(id, sequence: record.sequence)) }
        if let path = record.filePath {
            // After the row: a killed run never finds a row whose part it deleted.
            let paths = deleteFiles && record.status == .completed ? [PartFile.path(for: path), path] : [PartFile.path(for: path)]
            persistence.hand(.removeFiles(paths, root: record.request.root, afterCommit: !rowDeleted))
            releasePath(path, of: id)
        }
        emit(.removed(id))
    }

    /// A download as this thread knows it (its row read beforehand, see `withRows`).
    func snapshot(of id: DownloadID) -> Download? {
        records[id]?.snapshot()
    }

    /// The downloads of each URL, in enqueue order: the rows, read by the disk worker, with
    /// the busy ones as they are in memory.
    func downloads(of urls: [URL], reply: CommandReply<[[Download]]>) {
        guard persistence.persistent else {
            return reply(self, .success(urls.map { url in
                records.hot.values.filter { $0.request.url == url }.sorted { $0.sequence < $1.sequence }.map { $0.snapshot() }
            }))
        }
        readRows({ store in try store.records(of: urls) },
                 then: { loop, rows in rows.map { $0.map { (loop.records.hot[$0.request.id] ?? $0).snapshot() } } }, reply: reply)
    }

    /// How many downloads are in each status.
    func counts(reply: CommandReply<[DownloadStatus: Int]>) {
        guard persistence.persistent else {
            var counts: [DownloadStatus: Int] = [:]
            for record in records.hot.values { counts[record.status, default: 0] += 1 }
            return reply(self, .success(counts))
        }
        readRows({ store in try store.counts() }, then: { _, counts in counts }, reply: reply)
    }

    /// Every download, in enqueue order (the busy ones as they are in memory).
    func snapshots(reply: CommandReply<[Download]>) {
        guard persistence.persistent else {
            return reply(self, .success(records.hot.values.sorted { $0.sequence < $1.sequence }.map { $0.snapshot() }))
        }
        // Each row becomes its (smaller) value as it is read: a large queue is in memory once.
        readRows({ store in
            var downloads: [Download] = []
            try store.forEachRecord { downloads.append($0.snapshot()) }
            return downloads
        }, then: { loop, downloads in
            loop.records.hot.isEmpty ? downloads : downloads.map { loop.records.hot[$0.request.id]?.snapshot() ?? $0 }
        }, reply: reply)
    }

    /// Reads on the disk worker, then shapes the answer here (with what is in memory).
    private func readRows<Read: Sendable, T: Sendable>(_ read: @escaping @Sendable (any QueueStore) throws -> Read,
                                                       then shape: @escaping @Sendable (EngineCore, Read) -> T, reply: CommandReply<T>) {
        persistence.onWorker({ store in
            Result { () throws -> Read in
                guard let store else { throw DownloadError(.fileSystem, "no store") }
                return try read(store)
            }.mapError { ErrorBox(error: $0) }
        }, then: { loop, read in
            switch read {
            case .success(let value):
                reply(loop, .success(shape(loop, value)))
            case .failure(let box):
                loop.persistence.failed(box.error)
                reply(loop, .failure(.storage("could not read the queue", cause: box.error)))
            }
        }, ifClosed: reply.shutDown)
    }

    static func hostKey(_ url: URL) -> String {
        let host = url.host?.lowercased() ?? ""
        if let port = url.port { return "\(host):\(port)" }
        return host
    }

    /// The hosts of a download as the queue keeps them: its URL's, and the one that answered its
    /// last attempt at the end of the redirects (`HostPair`).
    func hostPair(of record: DownloadRecord) -> HostPair {
        hostPair(host: record.host, answered: record.answeredHost ?? record.finalURL.flatMap(Self.hostKey(text:)))
    }

    func hostPair(host: String, answered: String?) -> HostPair {
        let first = scheduler.hosts.id(host)
        guard let answered, answered != host else { return HostPair(first: first) }
        return HostPair(first: first, last: scheduler.hosts.id(answered))
    }

    /// `hostKey` of a URL as text, on its bytes (no URL parse): `host[:port]`, lowercase, without a
    /// user part; nil when it has no `scheme://`.
    static func hostKey(text: String) -> String? {
        // On the bytes: this runs for every response, on the transfer thread.
        var text = text
        return text.withUTF8 { bytes -> String? in
            var index = 0
            while index + 2 < bytes.count, !(bytes[index] == 0x3A && bytes[index + 1] == 0x2F && bytes[index + 2] == 0x2F) { index += 1 }
            guard index + 2 < bytes.count else { return nil }
            var start = index + 3
            var end = start
            while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 {   // / ? #
                if bytes[end] == 0x40 { start = end + 1 }   // the last @ ends a user part
                end += 1
            }
            // The default port is not part of the key, as `hostKey(_:)` leaves it out when absent.
            let authority = UnsafeBufferPointer(rebasing: bytes[start..<end])
            if !authority.contains(where: { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 }) { return String(decoding: authority, as: UTF8.self) }
            return String(decoding: authority, as: UTF8.self).lowercased()
        }
    }
}
