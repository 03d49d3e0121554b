import CCurl
import FoundationEssentials

/// A fetch's transfer set up for its attempt; the loop only adds it to curl (a download's: `TransferTable.startDownload`).
extension Transfer {
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
