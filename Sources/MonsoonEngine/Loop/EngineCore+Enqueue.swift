import Foundation
import MonsoonStore

/// Adding downloads: checked on the transfer thread, written by the disk worker, then queued.
extension EngineCore {
    /// Adds a batch whole or not at all. The records of the requests' ids must be at hand
    /// (`withRows`). With a store, the disk worker numbers and inserts them in one transaction,
    /// after taking in what other processes added (so numbering never collides) and deleting
    /// the downloads they replace: nothing is replaced unless everything is added.
    func enqueue(_ requests: [DownloadRequest], replacing: Bool, reply: CommandReply<[DownloadID]>) {
        guard !stopping else { return reply.shutDown() }
        if let refusal = check(requests, replacing: replacing) { return reply(self, .failure(refusal)) }
        // What to insert, and the id each request answers with (nil: the inserted row's).
        var inserts: [DownloadRequest] = []
        var kept: [DownloadID?] = []
        var replaced: [DownloadRecord] = []
        for request in requests {
            if !request.id.rawValue.isEmpty, records[request.id]?.placing == true, case .deferred? = handle(request.id, .replaceRequested(request)) {
                // The old file is being renamed into place: replace it once that lands.
                kept.append(request.id)
                continue
            }
            if !request.id.rawValue.isEmpty, let old = records[request.id] { replaced.append(old) }
            inserts.append(request)
            kept.append(nil)
        }
        let after = persistence.adoptedThrough
        let deletions = replaced.map { ($0.request.id, $0.sequence) }
        persistence.onWorker({ [inserts] store in
            Self.insert(inserts, into: store, replacing: deletions, adoptingAfter: after)
        }, then: { [kept, inserts, replaced] loop, written in
            switch written {
            case .failure(let refusal):
                reply(loop, .failure(refusal))
            case .success(let written):
                // Without a store nothing guarded the ids and paths during the worker's trip:
                // another enqueue may have taken one meanwhile.
                if !loop.persistence.persistent, !replacing, let refusal = loop.check(inserts, replacing: false) {
                    return reply(loop, .failure(refusal))
                }
                // The replaced downloads go now (their rows went with the inserts), as they are now.
                for old in replaced {
                    let current = loop.records.hot[old.request.id].flatMap { $0.sequence == old.sequence ? $0 : nil } ?? old
                    loop.forget(current, deleteFiles: false, rowDeleted: loop.persistence.persistent)
                }
                if let box = written.adopted.unreadable { loop.persistence.failed(box.error) }
                loop.adoptRows(written.adopted.rows)
                var inserted = written.records.makeIterator()
                var ids: [DownloadID] = []
                for id in kept {
                    if let id {
                        ids.append(id)
                    } else if let record = inserted.next() {
                        ids.append(loop.queueNew(record))
                    }
                }
                loop.records.keepFresh(written.records, limit: Self.freshLimit)
                if let last = written.records.last { loop.persistence.adopted(through: last.sequence) }
                loop.scheduler.needsScheduling = true
                reply(loop, .success(ids))
            }
        }, ifClosed: reply.shutDown)
    }

    /// What the disk worker wrote for an enqueue.
    struct Inserted: Sendable {
        var records: [DownloadRecord] = []
        var adopted: RestoreReader.NewRows = ([], nil)
    }

    /// Checks a batch before anything changes: ids, schemes, shared part files.
    func check(_ requests: [DownloadRequest], replacing: Bool) -> DownloadManagerError? {
        var seen = Set<DownloadID>()
        var paths: [String: DownloadID] = [:]
        for request in requests {
            if !request.id.rawValue.isEmpty {
                if !replacing && (records[request.id] != nil || seen.contains(request.id)) { return .duplicate(request.id) }
                seen.insert(request.id)
            }
            if case .discard = request.destination, persistence.persistent {
                return .invalidRequest(request.id, "a download that writes nothing is not kept in a queue: use a manager without a database")
            }
            if let refusal = DownloadRequest.refusal(of: request.url) { return .invalidRequest(request.id, refusal) }
            // Two downloads must never share a part file: one would truncate the other's bytes.
            // (With a store, the disk worker also checks the rows, in the inserting transaction.)
            if case .file(let path) = request.destination {
                if let refusal = LocalFile.lengthRefusal(of: path) { return .invalidRequest(request.id, refusal) }
                let owner = !persistence.persistent ? persistence.claimedPaths.withLock { $0[path] } : nil
                if let other = paths[path] ?? owner, other != request.id {
                    return .invalidRequest(request.id, "download \(other) already writes to \(path)")
                }
                paths[path] = request.id
            }
        }
        return nil
    }

    /// Disk worker: the rows, numbered and inserted (with a store), each with the bytes its part
    /// already holds; first the rows other processes added.
    private static func insert(_ requests: [DownloadRequest], into store: (any QueueStore)?, replacing deletions: [(DownloadID, Int)],
                               adoptingAfter after: Int) -> Result<Inserted, DownloadManagerError> {
        var written = Inserted()
        // Numbered in place below: a second array of the batch's records would double the
        // peak of a large enqueue (at 8,000 downloads, 7 MB more).
        written.records = requests.map { request in
            var record = Record(request: request, sequence: 0, host: hostKey(request.url))
            if case .file(let path) = request.destination {
                record.filePath = path
                if let size = PartFile.size(at: PartFile.path(for: path)) { record.bytes = size }
            }
            return record
        }
        guard let store else { return .success(written) }
        do {
            // One transaction for the whole batch: a hundred thousand rows in one commit.
            try store.transaction {
                for (id, sequence) in deletions { try store.delete(id, sequence: sequence) }
                written.adopted = try RestoreReader.newRows(in: store, after: after)
                var next = try store.nextSequence()
                for index in written.records.indices {
                    let request = written.records[index].request
                    if case .file(let path) = request.destination, let other = try store.owner(ofPath: path), other != request.id {
                        throw DownloadManagerError.invalidRequest(request.id, "download \(other) already writes to \(path)")
                    }
                    let automatic = request.id.rawValue.isEmpty
                    while true {
                        written.records[index].sequence = next
                        if automatic { written.records[index].request.id = DownloadID("d\(next)") }
                        next += 1
                        do {
                            _ = try store.insert(written.records[index])   // its sequence is the one set above
                            break
                        } catch let error as StoreError where error.isConstraintViolation {
                            // `d<N>` already taken by an explicit id: take the next number.
                            if automatic { continue }
                            throw DownloadManagerError.duplicate(request.id)
                        }
                    }
                }
            }
            return .success(written)
        } catch let refusal as DownloadManagerError {
            return .failure(refusal)
        } catch {
            return .failure(.storage("could not save the downloads", cause: error))
        }
    }

    /// Puts an inserted record in the queue; without a store, numbers it first.
    private func queueNew(_ inserted: DownloadRecord) -> DownloadID {
        var record = inserted
        if !persistence.persistent {
            if record.request.id.rawValue.isEmpty {
                while records[DownloadID("d\(nextSequence)")] != nil { nextSequence += 1 }
                record.request.id = DownloadID("d\(nextSequence)")
            }
            record.sequence = nextSequence
            nextSequence += 1
            if let path = record.filePath { persistence.claimedPaths.withLock { $0[path] = record.request.id } }
            records[record.request.id] = record
        } else {
            nextSequence = max(nextSequence, record.sequence + 1)
        }
        let id = record.request.id
        scheduler.claimed?[id, default: []].insert(Self.ownClaim)
        scheduler.queue.insert(id, key: record.queueKey, hosts: hostPair(of: record))
        // Nobody asking (a bulk enqueue in a script, or a `get`, which knows what it added): build nothing.
        if hub.wants(.added) { emit(.added(record.snapshot())) }
        return id
    }
}
