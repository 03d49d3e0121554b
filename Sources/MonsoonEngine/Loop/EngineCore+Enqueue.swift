import FoundationEssentials

/// Adding downloads: checked on the transfer thread, written by the disk worker, then queued.
extension EngineCore {
    /// Adds a batch whole or not at all (the records of its ids at hand: `withRows`). With a store,
    /// the disk worker numbers and inserts it in one transaction (`Enqueuing.insert`).
    func enqueue(_ requests: [DownloadRequest], replacing: Bool, reply: CommandReply<[DownloadID]>) {
        guard !stopping else { return reply.shutDown() }
        if let refusal = check(requests, replacing: replacing) { return reply(self, .failure(refusal)) }
        let plan = Enqueuing.plan(requests, records: &records)
        for (id, action) in plan.refused { refused(id, action) }
        let (after, inserts) = (persistence.adoptedThrough, plan.inserts)
        let deletions = plan.replaced.map { ($0.request.id, $0.sequence) }
        persistence.onWorker({ store in
            Enqueuing.insert(inserts, into: store, replacing: deletions, adoptingAfter: after)
        }, then: { [answers = plan.answers, replaced = plan.replaced] loop, written in
            switch written {
            case .failure(let refusal):
                reply(loop, .failure(refusal))
            case .success(let written):
                // Without a store nothing guarded the ids and paths meanwhile: another enqueue may have taken one.
                if !loop.persistence.persistent, !replacing, let refusal = loop.check(inserts, replacing: false) {
                    return reply(loop, .failure(refusal))
                }
                // The replaced go now, as they are now (their rows went with the inserts).
                for old in replaced {
                    let current = loop.records.hot[old.request.id].flatMap { $0.sequence == old.sequence ? $0 : nil } ?? old
                    loop.forget(current, deleteFiles: false, rowDeleted: loop.persistence.persistent)
                }
                if let box = written.adopted.unreadable { loop.persistence.failed(box.error) }
                loop.adoptRows(written.adopted.rows)
                var inserted = written.records.makeIterator()
                let ids = answers.compactMap { id in id ?? inserted.next().map(loop.queueNew) }
                loop.records.keepFresh(written.records)
                if let last = written.records.last { loop.persistence.adopted(through: last.sequence) }
                reply.afterOwnWrites(loop, .success(ids))   // its rows are in: a later batch goes on from them
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
        if hub.wants(.added) { emit(.added(record.snapshot())) }
        return id
    }
}
