import Foundation

/// Starts without a round trip to the disk worker: the rows of the next downloads in line are
/// read ahead, and a download with no file yet is planned here.
extension EngineCore {
    /// Reads ahead the rows of the downloads next in line, so that when a slot frees the next
    /// one starts from its record in memory (`plannedHere`), without a round trip to the worker
    /// in between. Up to twice the concurrency is read ahead, in batches of at least the
    /// concurrency: the rows of a queue of a hundred thousand stay on disk.
    func prefetchStarts() {
        guard persistence.persistent, !persistence.restoring, !stopping, !scheduler.queue.isEmpty else { return }
        // Read through the class at each entry, the table would be copied each time (eight
        // collections retained and released); this copy is gone before the table changes below.
        let hot = { [records] id in records.isHot(id) }
        let (read, letGo) = scheduler.rowsToReadAhead(window: 2 * max(1, configuration.maxConcurrentDownloads), isHot: hot)
        for id in letGo { records.evictIfAtRest(id) }
        guard let ids = read else { return }
        persistence.onWorker({ store in
            // A failed read only means these start the usual way, reading their rows then.
            (try? store?.records(withIDs: ids, skippingUnreadable: { _ in })) ?? []
        }, then: { loop, rows in
            for id in ids { loop.scheduler.prefetching.remove(id) }
            loop.scheduler.readAhead.formUnion(loop.records.adopt(rows))
        }, ifClosed: {})
    }

    /// The most inserted rows kept in memory waiting for their start (`RecordTable.keepFresh`):
    /// they are the rows as written, so their downloads start without a read of the database, as
    /// rows read ahead do. A count, not a size (about 2.4 MB of records with short URLs and no
    /// headers; long signed URLs or headers make each larger). A `get` of a thousand URLs then
    /// never reads its rows back; the rows of a larger batch past these are read ahead as any others.
    static let freshLimit = 1024

    /// The plan of a download that has no file yet, made on the loop without asking the disk
    /// worker: no name, so no part to look at, and its folder's disk measured less than
    /// `SpacePolicy.measureInterval` ago. Its allowance then stands as the loop keeps it (the last
    /// measurement less every byte written since), as it does for a disk being written to, which
    /// `SpaceGovernor.check` measures at that interval. Most of a large queue of new downloads starts so,
    /// without a round trip each. Nil: the disk worker plans it.
    func plannedHere(_ record: DownloadRecord, now: Date) -> StartPreparation.Ready? {
        guard record.filePath == nil, !persistence.awaitsPart(record.request.id),
              let space = space.recentSpace(of: record.request.destination.folder, now: now) else { return nil }
        var ready = StartPreparation.Ready(record: record, plan: AttemptPlan(offset: 0, ifRange: nil))
        ready.space = space
        ready.spaceReused = true
        return ready
    }
}
