import FoundationEssentials

/// What the engine's other threads hand back to the transfer thread: the disk worker's answers,
/// the placer's results, a volume's measurement, a part's flush. Facts only: the loop takes each
/// in on its own thread (`receive`); the senders never touch its fields.
extension EngineLoop {
    enum Message: Sendable {
        /// Attempts the disk worker planned from the parts on disk (`startPrepared`).
        case startsPrepared([(DownloadID, StartPreparation.Outcome)])
        /// Parts the disk worker named and opened, or could not (`bodyPrepared`).
        case bodiesPrepared([(BodyPreparation, BodyPreparation.Outcome)])
        /// Whole files the disk worker wrote in one pass, or could not (`wholesWritten`).
        case wholesWritten([WholeFile.Answer])
        /// Saves committed, and rows deleted (by id and sequence).
        case rowsSaved([DownloadID], deleted: [(DownloadID, Int)])
        /// A save or a read failed (kept for `persistenceError`).
        case storeFailed(ErrorBox)
        /// Finished files placed, or not (`placementFinished`); `recorded`: those whose WARC records were written.
        case placed([(DownloadID, Result<Void, DownloadError>)], recorded: [DownloadID])
        /// A volume's free bytes (nil: unknown), measured when `written` was `writtenAtRequest`.
        case spaceMeasured(volume: UInt64, free: Int?, writtenAtRequest: Int)
        /// A running part was flushed up to `length` (`flushed`: it worked), for its checkpoint:
        /// taken only if the same attempt still runs on the same part.
        case checkpointFlushed(DownloadID, attempt: ObjectIdentifier, epoch: Int, length: Int, flushed: Bool)
        /// A part closed at shutdown was flushed up to `length`: its checkpoint, if still its part.
        case stoppedPartFlushed(DownloadID, epoch: Int, length: Int, flushed: Bool)
        /// The disk worker's answer while it restores the queue.
        case restored(RestoreReader.Message)
    }

}

extension EngineCore {
    func receive(_ message: EngineLoop.Message) {
        switch message {
        case .startsPrepared(let starts):
            for (id, outcome) in starts { startPrepared(id, outcome) }
        case .bodiesPrepared(let outcomes):
            for (preparation, outcome) in outcomes { bodyPrepared(preparation, outcome) }
        case .wholesWritten(let answers):
            wholesWritten(answers)
        case .rowsSaved(let saved, let deleted):
            records.saved(saved) { scheduler.runs($0) }
            records.deleted(deleted)
        case .storeFailed(let box):
            persistence.failed(box.error)
        case .placed(let results, let recorded):
            placements.written(recorded)
            for (id, result) in results { placementFinished(id, result) }
        case .spaceMeasured(let volume, let free, let writtenAtRequest):
            spaceMeasured(volume, free, writtenAtRequest: writtenAtRequest)
        case .checkpointFlushed(let id, let attempt, let epoch, let length, let flushed):
            if let limit = transfers.checkpointFlushed(id, attempt: attempt), flushed {
                records.checkpointFlushed(id, epoch: epoch, length: length, limit: limit)
            }
        case .stoppedPartFlushed(let id, let epoch, let length, let flushed):
            if flushed, records.checkpointFlushed(id, epoch: epoch, length: length) { persist(id) }
            records.letGo(id)
        case .restored(let restored):
            self.restored(restored)
        }
    }
}

extension EngineInbox {
    /// Sends the loop a message; false once the engine has shut down.
    @discardableResult
    func send(_ message: EngineLoop.Message) -> Bool {
        post { $0.receive(message) }
    }
}
