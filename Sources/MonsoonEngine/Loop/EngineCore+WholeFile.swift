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

    /// The disk worker's answers: each file in place (its row saved as completed with it, or not),
    /// or why not. The bodies' buffers come back here to be freed.
    func wholesWritten(_ answers: [WholeFile.Answer]) {
        for answer in answers {
            let id = answer.id
            // Not written: the disk's allowance the bytes spent as they came is given back.
            if case .failure = answer.result, let volume = answer.volume.flatMap({ space.volumes[$0] }) { volume.giveBack(answer.body.count) }
            space.earlyBudget.giveBack(answer.body)
            scheduler.needsScheduling = true   // a start it held back may go now
            // Its own save, confirmed first: a save queued after it may have written the row again
            // without the file (then the completion is saved once more).
            if persistence.persistent { records.saved([id]) }
            // Where the record lies: no copy of it in and out.
            let current = records.isHot(id) && records.update(id) { record -> Bool in
                guard record.sequence == answer.sequence, record.placing else { return false }
                // Not written: no part holds the bytes the record counted.
                if case .failure = answer.result { (record.bytes, record.highWater) = (0, 0) }
                if let path = answer.path, record.filePath != path { record.filePath = path }
                return true
            } == true
            guard current else { continue }
            placementFinished(id, answer.result, saved: answer.rowSaved && !records.hasSavesInFlight(id), transient: answer.transient)
            records.evictIfAtRest(id)
        }
    }
}
