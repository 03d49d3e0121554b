import FoundationEssentials

/// The run's rate limit (`EngineConfiguration.maxBytesPerSecond`): every download's write callback
/// spends from one `TokenBucket` and pauses its transfer when it is empty; the loop refills it and
/// lets the paused transfers go on in turn. A paused socket is not read, so TCP's flow control
/// slows the server too. Error bodies (at most 1 MiB) and fetches (waited for by a person) are not limited.
extension TransferTable {
    /// curl's receive buffer for a download: 256 KiB (fewer, larger writes: the most a single
    /// stream gains from), but no more than 4 MiB across every download that may run at
    /// once, and never under 64 KiB: at 32 at once, 128 KiB each (above 64, the floor wins).
    /// Set when a transfer starts: a new limit (`setLimits`) applies to the next ones.
    static func downloadBufferSize(concurrency: Int) -> Int {
        max(64 * 1024, min(256 * 1024, (4 << 20) / max(1, concurrency)))
    }
    static let fetchBufferSize = 64 * 1024

    /// The buffers of a download about to start: under a limit, sized to its share among the
    /// `runningDownloads` (`RateLimiter.buffers`); else `downloadBufferSize` for curl's.
    static func downloadBuffers(rate: Int?, concurrency: Int, runningDownloads: Int) -> (kernel: Int?, curl: Int) {
        let unlimited = downloadBufferSize(concurrency: concurrency)
        guard let rate else { return (nil, unlimited) }
        let sizes = RateLimiter.buffers(rate: rate, sharedBy: runningDownloads, unlimited: unlimited)
        return (sizes.kernel, sizes.curl)
    }

    /// Once a turn, after curl ran: the transfers the limit paused join the line, the bucket is
    /// refilled, and, once it holds `resumeLevel`, the first in line go on while it holds anything.
    /// A transfer let go is given back what curl held for it at once (inside `curl_easy_pause`),
    /// spends until the bucket is empty, and is paused again at the back of the line.
    func pace() {
        guard let limiter = rateLimiter else { return }
        for transfer in running.values where transfer.state.paused.contains(.rate) { limiter.join(transfer) }
        guard !limiter.waiting.isEmpty else { return }
        limiter.bucket.refill(now: RateLimiter.now())
        guard limiter.bucket.mayResume else { return }
        while limiter.bucket.tokens > 0, let transfer = limiter.next() {
            // Ended meanwhile (paused, removed, failed): its turn is over.
            guard runs(transfer) else { continue }
            // Held for another reason as well: that reason's handler lets it go.
            guard case .goOn = transfer.handle(.resumed(.rate)) else { continue }
            transfer.goOn()
            if transfer.state.paused.contains(.rate) { limiter.join(transfer) }
        }
    }

    /// When the loop must wake to let paused transfers go on (nil: none waits).
    func rateWake(now: Date) -> Date? {
        guard let limiter = rateLimiter, !limiter.waiting.isEmpty else { return nil }
        let nanoseconds = limiter.bucket.nanoseconds(untilHolding: limiter.bucket.resumeLevel, now: RateLimiter.now())
        return now.addingTimeInterval(Double(nanoseconds) / 1e9)
    }
}
