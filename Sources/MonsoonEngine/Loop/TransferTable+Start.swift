import CCurl
import FoundationEssentials

/// A download's attempt set up, added to curl and counted as running; and taken out again.
extension TransferTable {
    /// Sets `record` for the attempt the disk worker planned from its part: where it resumes, or
    /// a new part (a new epoch) when the old one was thrown away.
    func resume(_ record: inout DownloadRecord, as ready: StartPreparation.Ready) {
        guard let part = ready.part else { return }
        let offset = ready.plan.offset
        record.resume = offset > 0 ? part.state : nil
        record.bytes = offset
        record.highWater = max(record.highWater, offset)
        if part.discarded { record.startPartOver(epoch: nextPartEpoch()) }
    }

    /// Sets up the attempt of `record`'s download from `plan`'s offset, writing to `volume` (nil:
    /// not measured), adds it to curl and counts it as running, on the `hosts` its slot was taken for.
    /// - Parameters:
    ///   - expected: the size it is expected to reach, before the response says it.
    ///   - runningDownloads: how many run, for its share of a rate limit's buffers.
    /// - Returns: nil when curl refused it.
    func startDownload(_ record: DownloadRecord, plan: AttemptPlan, expected: Int?, volume: Volume?, hosts: [Int], configuration: EngineConfiguration,
                       runningDownloads: Int, budget: EarlyBudget, multi: MultiHandle) -> Transfer? {
        let request = record.request
        let transfer = Transfer(purpose: .download(request.id), plan: plan, handles: easyHandles)
        let buffers = Self.downloadBuffers(rate: configuration.maxBytesPerSecond, concurrency: configuration.maxConcurrentDownloads,
                                           runningDownloads: runningDownloads)
        transfer.configure(url: request.url.absoluteString, headers: request.headers, addresses: request.addresses,
                           followsRedirects: request.followsRedirects, configuration: configuration, bufferSize: buffers.curl)
        if let kernel = buffers.kernel { transfer.easy.setReceiveBuffer(kernel) }
        transfer.part.path = record.filePath.map(PartFile.path(for:))
        transfer.part.checkpoint.requestedAt = configuration.clock.now
        transfer.progress = Transfer.Progress(fileSize: plan.offset, total: record.resume?.total, expected: expected)
        transfer.limits = Transfer.Limits(maxFileBytes: configuration.maxFileBytes ?? Int.max, volume: volume, rateLimiter: rateLimiter)
        if let limit = request.sizeLimit, limit.bytes < transfer.limits.maxFileBytes {
            transfer.limits.maxFileBytes = max(0, limit.bytes)
            transfer.limits.reason = limit.reason
        }
        transfer.early.budget = budget
        guard multi.add(transfer.easy) else { return nil }
        transfer.countedHosts = hosts
        started(transfer)
        return transfer
    }

    /// What stopping a download's attempt came to.
    enum Stopping {
        /// Asked from inside one of curl's callbacks: the attempt is cut short (its callbacks
        /// answer 0 from now on) and stopped once curl has returned (`afterCurl`); freed inside
        /// the callback, it would leave curl a handle and a callback pointing at nothing.
        case later
        /// Taken out of curl (nil: none ran); `freed`: an ended attempt that waited for its part
        /// no longer holds back a start.
        case done(Transfer?, freed: Bool)
    }

    /// Takes download `id`'s attempt out of curl and of the table (its part is the caller's to
    /// let go). A part being prepared is closed when it comes back, and what came for it
    /// meanwhile is dropped.
    func stop(_ id: DownloadID, multi: MultiHandle?) -> Stopping {
        if let transfer = running[id], multi?.remove(transfer.easy) == false {   // the handle is there since it started
            transfer.handle(.abort(.stopped))
            afterCurl(.stop(id, transfer))
            return .later
        }
        var freed = false
        if let waiting = preparing.removeValue(forKey: id) {
            waiting.discardEarly()
            freed = waiting.state.phase.partWait?.ended != nil
        }
        guard let transfer = running[id] else { return .done(nil, freed: freed) }
        removeHandle(transfer.easy.raw)
        return .done(transfer, freed: freed)
    }
}
