import FoundationEssentials

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
        guard let before = records[id], let record = records.update(id, { URLChange.apply(url, to: &$0); return $0 }) else { return .failure(.notFound(id)) }
        // Queued in line under its old hosts: put back under the new ones.
        if before.status == .queued && scheduler.runs(id) && space.holds[id] == nil && scheduler.starting[id] == nil {
            scheduler.reline(id, from: before, to: record)
        }
        switch outcome {
        case .keepStatus:
            persist(id)
        case .queueAgain:
            requeueFresh(id)
        case .stopAndQueueAgain:
            move(id, .requeue)
        }
        persistence.relabelPart(of: record, from: old)
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
