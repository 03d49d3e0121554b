import Foundation

/// `DownloadManager.changeURL(_:to:)` and `replaceFailure(of:with:)`, on the transfer thread.
extension EngineCore {
    func changeURL(_ id: DownloadID, to url: URL) -> Result<Void, DownloadManagerError> {
        guard let current = records[id] else { return .failure(.notFound(id)) }
        if let refusal = DownloadRequest.refusal(of: url) { return .failure(.invalidRequest(id, refusal)) }
        let old = current.request.url.absoluteString
        let outcome = URLChange.outcome(status: current.status, placing: current.placing)
        guard url.absoluteString != old else {
            // Nothing to change, but a failed download is still asked for again, as promised.
            if outcome == .queueAgain { requeueFresh(id) }
            return .success(())
        }
        if outcome == .stopAndQueueAgain { stopTransfer(id) }
        guard var record = records[id] else { return .failure(.notFound(id)) }
        // Queued in line under its old hosts: taken out and put back under the new ones.
        let inLine = record.status == .queued && scheduler.runs(id) && space.holds[id] == nil && scheduler.starting[id] == nil
        if inLine { scheduler.queue.remove(key: record.queueKey) }
        URLChange.apply(url, to: &record)
        records[id] = record
        if inLine { scheduler.line(id, key: record.queueKey, hosts: scheduler.hostPair(of: record)) }
        switch outcome {
        case .keepStatus:
            persist(id)
        case .queueAgain:
            requeueFresh(id)
        case .stopAndQueueAgain:
            move(id, .requeue)
        }
        // The part carries its origin too (for a run that finds it without this row): it says the
        // new URL from now on, written after the row that says so.
        if let path = record.filePath {
            let part = PartFile.path(for: path)
            let root = record.request.root
            persistence.hand(.job { _ in PartFile.relabel(part, from: old, to: url.absoluteString, root: root) })
        }
        return .success(())
    }

    /// Queues a download again with fresh retry counters (a changed URL's failure does not lift
    /// its host's hold: no user asks for it now).
    func requeueFresh(_ id: DownloadID) {
        records.update(id) { $0.counters = RetryPolicy.Counters() }
        handle(id, .restartsForgotten)
        move(id, .requeue)
    }

    func replaceFailure(of id: DownloadID, with error: DownloadError) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        guard record.status == .failed else {
            return .failure(.invalidRequest(id, "it is \(record.status.rawValue), not failed (resumed or retried meanwhile?)"))
        }
        records.update(id) { $0.lastError = error }
        persist(id)
        emitStatus(id)   // no status changes, but listeners learn the reason as they learned the failure
        return .success(())
    }
}
