import Foundation

/// Starts without a round trip to the disk worker: the rows of the next downloads in line are
/// read ahead (a download with no file yet is planned here: `SpaceGovernor.plannedStart`).
extension EngineCore {
    /// Up to twice the concurrency is read ahead, in batches of at least the concurrency: the rows
    /// of a queue of a hundred thousand stay on disk.
    func prefetchStarts() {
        guard persistence.persistent, !persistence.restoring, !stopping, !scheduler.queue.isEmpty else { return }
        // One copy, gone before the table changes: read through the class, each look would copy it.
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
}
