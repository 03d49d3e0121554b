import Foundation

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
            Enqueuing.insert(inserts, into: store, replacing: deletions, adoptingAfter: after)
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
                let ids = kept.compactMap { id in id ?? inserted.next().map(loop.queueNew) }
                loop.records.keepFresh(written.records)
                if let last = written.records.last { loop.persistence.adopted(through: last.sequence) }
                reply(loop, .success(ids))
            }
        }, ifClosed: reply.shutDown)
    }

    private func check(_ requests: [DownloadRequest], replacing: Bool) -> DownloadManagerError? {
        Enqueuing.refusal(of: requests, replacing: replacing, persistent: persistence.persistent,
                          known: { records[$0] != nil }, pathOwner: { path in persistence.claimedPaths.withLock { $0[path] } })
    }

    /// Puts an inserted download in line, numbered first without a store.
    private func queueNew(_ inserted: DownloadRecord) -> DownloadID {
        let record = records.add(inserted)
        let id = record.request.id
        if !persistence.persistent, let path = record.filePath { persistence.claimedPaths.withLock { $0[path] = id } }
        scheduler.claimed?[id, default: []].insert(Self.ownClaim)
        scheduler.line(id, key: record.queueKey, hosts: scheduler.hostPair(of: record))
        // Nobody asking (a bulk enqueue in a script, or a `get`, which knows what it added): build nothing.
        if hub.wants(.added) { emit(.added(record.snapshot())) }
        return id
    }
}
