import CCurl
import Foundation

/// A transfer set up for its attempt, from what the loop knows; the loop only adds it to curl.
extension Transfer {
    /// An attempt of download `id` from `plan`'s offset, writing to `volume` (nil: not measured).
    /// - Parameter expected: the size it is expected to reach, before the response says it.
    static func download(_ id: DownloadID, _ record: DownloadRecord, plan: AttemptPlan, expected: Int?, volume: Volume?, engine: EngineCore) -> Transfer {
        let configuration = engine.configuration
        let transfer = Transfer(purpose: .download(id), plan: plan, handles: engine.transfers.easyHandles)
        let buffers = TransferTable.downloadBuffers(rate: configuration.maxBytesPerSecond, concurrency: configuration.maxConcurrentDownloads,
                                                    runningDownloads: engine.scheduler.runningDownloads)
        let request = record.request
        transfer.configure(url: request.url.absoluteString, headers: request.headers, addresses: request.addresses,
                           followsRedirects: request.followsRedirects, configuration: configuration, bufferSize: buffers.curl)
        if let kernel = buffers.kernel { transfer.easy.setReceiveBuffer(kernel) }
        transfer.part.path = record.filePath.map(PartFile.path(for:))
        transfer.part.checkpoint.requestedAt = configuration.clock.now
        transfer.progress = Progress(fileSize: plan.offset, total: record.resume?.total, expected: expected)
        transfer.limits = Limits(maxFileBytes: configuration.maxFileBytes ?? Int.max, volume: volume, rateLimiter: engine.transfers.rateLimiter)
        if let limit = request.sizeLimit, limit.bytes < transfer.limits.maxFileBytes {
            transfer.limits.maxFileBytes = max(0, limit.bytes)
            transfer.limits.reason = limit.reason
        }
        transfer.early.budget = engine.space.earlyBudget
        transfer.engine = engine
        return transfer
    }

    /// A fetch's attempt: its whole body in memory, every header kept.
    static func fetch(_ job: FetchJob, configuration: EngineConfiguration, handles: EasyHandlePool) -> Transfer {
        let request = job.request
        let transfer = Transfer(purpose: .fetch(job), plan: AttemptPlan(offset: 0, ifRange: nil), handles: handles)
        transfer.configure(url: request.url.absoluteString, headers: request.headers, addresses: request.addresses,
                           followsRedirects: request.followsRedirects, configuration: configuration, bufferSize: TransferTable.fetchBufferSize)
        // With a WARC, a body is recorded as it came: none compressed, which curl would have decoded.
        if request.acceptsCompression && configuration.warc == nil { transfer.easy.setString(CURLOPT_ACCEPT_ENCODING, "") }
        transfer.easy.setLong(CURLOPT_TIMEOUT_MS, Int(request.timeout * 1000))
        if request.headOnly { transfer.easy.setLong(CURLOPT_NOBODY, 1) }
        transfer.head.keepsFields = true
        transfer.limits.maxBytes = request.maxBytes
        return transfer
    }
}
