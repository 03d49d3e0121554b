/// What the WARC (`EngineConfiguration.warc`) is told as attempts end: the decisions are
/// `WARCCapture`'s; the writing is the archive's, on its own thread.
extension EngineCore {
    /// An attempt of download `id` ended; `keepsBody`: what it wrote stays in the part (it goes
    /// on from there, or is complete), else it is thrown away.
    func recordAttempt(_ id: DownloadID, _ transfer: Transfer, keepsBody: Bool) {
        guard let archive = configuration.warc, let exchanges = transfer.warcExchanges else { return }
        transfer.warcExchanges = []   // told once, whichever path ends the attempt
        var kept: Range<Int>?
        if keepsBody, transfer.state.body == .written { kept = (transfer.progress.fileSize - transfer.progress.thisAttempt)..<transfer.progress.fileSize }
        // New bytes in the part: its file is not the one recorded any more.
        if let kept, !kept.isEmpty { warcRecorded.remove(id) }
        var capture = warcCaptures[id] ?? WARCCapture()
        var now = capture.attemptEnded(exchanges, kept: kept)
        if !keepsBody { now += capture.abandon() }
        warcCaptures[id] = capture.pieces.isEmpty ? nil : capture
        archive.record(now)
    }

    /// Download `id` stopped without its file (failed, or removed): its waiting exchanges are written, heads only.
    func abandonWARC(_ id: DownloadID) {
        warcRecorded.remove(id)
        guard let archive = configuration.warc, var capture = warcCaptures.removeValue(forKey: id) else { return }
        archive.record(capture.abandon())
    }

    /// What the placer writes for a finished file, before it is said to be complete (nothing
    /// when its records were written by an earlier placement that did not land).
    func warcPayload(_ id: DownloadID, url: String, partPath: String) -> WARCPayload? {
        guard configuration.warc != nil, !warcRecorded.contains(id) else { return nil }
        return WARCPayload(pieces: warcCaptures[id]?.pieces ?? [], url: url, path: partPath)
    }

    /// The placer wrote these downloads' records: whatever becomes of their placement, their
    /// exchanges are written (a failure after it writes none again).
    func warcWritten(_ ids: [DownloadID]) {
        for id in ids {
            warcCaptures[id] = nil
            warcRecorded.insert(id)
        }
    }

    /// At shutdown: what waits for files that will not be complete in this run is written now
    /// (a file being placed has its records written by the placer).
    func abandonAllWARC() {
        for id in Array(warcCaptures.keys) where records[id]?.placing != true { abandonWARC(id) }
    }
}
