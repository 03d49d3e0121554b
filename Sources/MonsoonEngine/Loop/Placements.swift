/// The finished files of this turn waiting to be handed to the placer together (group commit),
/// and, with a WARC, each download's exchanges whose bodies are in its part, until its file is
/// complete (`WARCCapture` decides what is recorded). Confined to the transfer thread.
struct Placements {
    let archive: WARCArchive?
    private var waiting: [(DownloadID, Placement)] = []
    private(set) var captures: [DownloadID: WARCCapture] = [:]
    /// Downloads whose file was recorded but is not in place yet: its next placement records nothing.
    private(set) var recorded: Set<DownloadID> = []

    init(archive: WARCArchive?) {
        self.archive = archive
    }

    mutating func append(_ id: DownloadID, _ placement: Placement) {
        waiting.append((id, placement))
    }

    /// Adds download `id`'s finished part to this turn's batch (the part's descriptor goes with it):
    /// the placer flushes it, renames it to `record`'s file and flushes its folder, so a slow disk
    /// never stalls other transfers.
    mutating func place(_ record: DownloadRecord, _ transfer: Transfer) {
        guard let path = record.filePath else { return }
        let lastModified = (transfer.head.lastModified ?? record.resume?.lastModified).flatMap(HTTPDate.parse)
        var placement = Placement(fd: transfer.part.fd, partPath: PartFile.path(for: path), destination: path, lastModified: lastModified,
                                  root: record.request.root)
        placement.warc = payload(record.request.id, url: record.request.url.absoluteString, partPath: placement.partPath)
        transfer.part.fd = -1
        append(record.request.id, placement)
    }

    /// A whole body that came before its part was asked for, lent to the disk worker to be written as
    /// `preparation`'s file in one pass, with `record`'s row as it is once complete (nil: a queue in memory).
    func whole(_ transfer: Transfer, _ preparation: BodyPreparation, completing record: DownloadRecord?) -> WholeFile? {
        guard let body = transfer.lendEarly() else { return nil }
        var row = record
        row?.restoreStatus(.completed)
        row?.retryAt = nil
        row?.lastError = nil
        return WholeFile(preparation: preparation, body: body, lastModified: transfer.head.lastModified.flatMap(HTTPDate.parse),
                         volume: transfer.limits.volume?.id, completedRow: row)
    }

    /// The disk worker's answers for whole files: each body's buffer goes back to the budget, and a
    /// body not written gives back the disk's allowance it spent as it came, and no longer counts
    /// in its record. `records` take each file's name.
    /// - Returns: the placements that ended for downloads still placing them, with whether the row
    ///   was saved as completed (and no later save may have written it again without the file).
    func wholesWritten(_ answers: [WholeFile.Answer], records: inout RecordTable, space: SpaceGovernor, persistent: Bool)
        -> [(id: DownloadID, result: Result<Void, DownloadError>, saved: Bool, transient: Bool)] {
        answers.compactMap { answer in
            let id = answer.id
            if case .failure = answer.result, let volume = answer.volume.flatMap({ space.volumes[$0] }) { volume.giveBack(answer.body.count) }
            space.earlyBudget.giveBack(answer.body)
            // Its own save, confirmed first: a save queued after it may have written the row again
            // without the file (then the completion is saved once more).
            if persistent { records.saved([id]) }
            // Where the record lies: no copy of it in and out.
            let current = records.isHot(id) && records.update(id) { record -> Bool in
                guard record.sequence == answer.sequence, record.placing else { return false }
                if case .failure = answer.result { (record.bytes, record.highWater) = (0, 0) }   // no part holds them
                if let path = answer.path, record.filePath != path { record.filePath = path }
                return true
            } == true
            return current ? (id, answer.result, answer.rowSaved && !records.hasSavesInFlight(id), answer.transient) : nil
        }
    }

    mutating func take() -> [(DownloadID, Placement)]? {
        guard !waiting.isEmpty else { return nil }
        defer { waiting.removeAll() }
        return waiting
    }

    /// An attempt of download `id` ended; `keepsBody`: what it wrote stays in the part (it goes
    /// on from there, or is complete), else it is thrown away.
    mutating func recordAttempt(_ id: DownloadID, _ transfer: Transfer, keepsBody: Bool) {
        guard let archive, let exchanges = transfer.warcExchanges else { return }
        transfer.warcExchanges = []   // told once, whichever path ends the attempt
        var kept: Range<Int>?
        if keepsBody, transfer.state.body == .written { kept = (transfer.progress.fileSize - transfer.progress.thisAttempt)..<transfer.progress.fileSize }
        // New bytes in the part: its file is not the one recorded any more.
        if let kept, !kept.isEmpty { recorded.remove(id) }
        var capture = captures[id] ?? WARCCapture()
        var now = capture.attemptEnded(exchanges, kept: kept)
        if !keepsBody { now += capture.abandon() }
        captures[id] = capture.pieces.isEmpty ? nil : capture
        archive.record(now)
    }

    /// Download `id` stopped without its file (failed, or removed): its waiting exchanges are written, heads only.
    mutating func abandon(_ id: DownloadID) {
        recorded.remove(id)
        guard let archive, var capture = captures.removeValue(forKey: id) else { return }
        archive.record(capture.abandon())
    }

    /// What the placer writes for a finished file, before it is said to be complete (nothing
    /// when its records were written by an earlier placement that did not land).
    func payload(_ id: DownloadID, url: String, partPath: String) -> WARCPayload? {
        guard archive != nil, !recorded.contains(id) else { return nil }
        return WARCPayload(pieces: captures[id]?.pieces ?? [], url: url, path: partPath)
    }

    /// The placer wrote these downloads' records: whatever becomes of their placement, their
    /// exchanges are written (a failure after it writes none again).
    mutating func written(_ ids: [DownloadID]) {
        for id in ids {
            captures[id] = nil
            recorded.insert(id)
        }
    }

    mutating func landed(_ id: DownloadID) {
        captures[id] = nil
        recorded.remove(id)
    }

    /// At shutdown: what waits for files that will not be complete in this run is written now
    /// (a file being placed, `placing`, has its records written by the placer).
    mutating func abandonAll(except placing: (DownloadID) -> Bool) {
        for id in Array(captures.keys) where !placing(id) { abandon(id) }
    }
}
