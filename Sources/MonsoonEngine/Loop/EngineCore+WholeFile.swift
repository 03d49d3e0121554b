import Foundation

/// Small files written whole in one pass by the disk worker (`WholeFile`), instead of through a
/// part: the part is asked for only when the body will not come whole into the attempt's buffer.
extension EngineCore {
    /// Asks the disk worker for a part (held back until now, or not).
    func askForPart(_ preparation: BodyPreparation) {
        let id = preparation.row.request.id
        persistence.askForPart(preparation)
        if persistence.persistent { records.saving(id) }
    }

    /// Hands a whole body to the disk worker, with the row as it is once the file is in place.
    func placeWhole(_ id: DownloadID, _ transfer: Transfer, _ preparation: BodyPreparation) {
        guard case .none? = handle(id, .placeStarted), let body = transfer.lendEarly() else {
            transfer.discardEarly()   // refused, and reported: the download failed
            return
        }
        let size = transfer.progress.fileSize
        let completedRow = records.update(id) { record -> DownloadRecord? in
            record.bytes = size
            record.total = size
            guard persistence.persistent else { return nil }
            var row = record
            row.restoreStatus(.completed)
            row.retryAt = nil
            row.lastError = nil
            return row
        } ?? nil
        if completedRow != nil { records.saving(id) }
        let lastModified = transfer.head.lastModified.flatMap(HTTPDate.parse)
        persistence.hand(.writeWhole(WholeFile(preparation: preparation, body: body, lastModified: lastModified, volume: transfer.limits.volume?.id,
                                          completedRow: completedRow)))
    }

    /// The disk worker's answers: each file in place (its row saved as completed with it, or not),
    /// or why not. The bodies' buffers come back here to be freed.
    func wholesWritten(_ answers: [WholeFile.Answer]) {
        for answer in answers {
            if case .failure = answer.result {
                // Not written: the disk's allowance the bytes spent as they came is given back, and
                // the record no longer counts them (no part holds them).
                if let volume = answer.volume.flatMap({ space.volumes[$0] }) { volume.giveBack(answer.body.count) }
                records.update(answer.id) { record in
                    guard record.sequence == answer.sequence, record.placing else { return }
                    record.bytes = 0
                    record.highWater = 0
                }
            }
            space.earlyBudget.giveBack(answer.body)
            scheduler.needsScheduling = true   // a start it held back may go now
            let id = answer.id
            // Its own save, confirmed first: a save queued after it may have written the row again
            // without the file (then the completion is saved once more).
            if persistence.persistent { records.saved([id]) }
            // Where the record lies: no copy of it in and out.
            let current = records.isHot(id) && records.update(id) { record -> Bool in
                guard record.sequence == answer.sequence, record.placing else { return false }
                if let path = answer.path, record.filePath != path { record.filePath = path }
                return true
            } == true
            guard current else { continue }
            placementFinished(id, answer.result, saved: answer.rowSaved && !records.hasSavesInFlight(id), transient: answer.transient)
            records.evictIfAtRest(id)
        }
    }
}
