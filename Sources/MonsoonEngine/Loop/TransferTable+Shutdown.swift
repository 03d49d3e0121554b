import Foundation

extension TransferTable {
    /// At shutdown: takes every attempt out of curl and forgets it; a fetch is cancelled; a
    /// download keeps its bytes and what the WARC is told of its attempt, and its part is flushed
    /// on the placer's queue (closing it), the answer saving its checkpoint (`stoppedPartFlushed`;
    /// the record is held in memory until then).
    /// - Returns: the downloads whose attempts ended, for the core to put back in line for the next run.
    func shutDown(multi: MultiHandle, records: inout RecordTable, placements: inout Placements, placer: Placer, inbox: EngineInbox) -> [DownloadID] {
        var ended: [DownloadID] = []
        for transfer in byHandle.values {
            multi.remove(transfer.easy)
            guard case .download(let id) = transfer.purpose else {
                if case .fetch(let job) = transfer.purpose { job.complete(.cancelled) }
                continue
            }
            ended.append(id)
            let length = transfer.progress.fileSize
            records.update(id) { $0.bytes = length }
            placements.recordAttempt(id, transfer, keepsBody: true)
            guard case .writing = transfer.state.phase, transfer.part.fd >= 0 else { continue }
            let epoch = records[id]?.partEpoch ?? 0
            records.hold(id)
            placer.flush(transfer.part.fd) { flushed in
                inbox.send(.stoppedPartFlushed(id, epoch: epoch, length: length, flushed: flushed))
            }
            transfer.part.fd = -1
        }
        removeAll()
        return ended
    }
}
