import Foundation

/// The rate limit over the whole run (`EngineConfiguration.maxBytesPerSecond`): every download's
/// write callback spends from one `TokenBucket` and pauses its transfer when it is empty; the
/// loop refills the bucket and lets the paused transfers go on in turn.
///
/// A paused transfer's socket is not read, so TCP's flow control slows the server down too: the
/// limit holds on the wire, not only on the disk. Downloads into a file and counted ones
/// (`.discard`) are limited; error bodies (at most 1 MiB, then dropped) and fetches (feeds, read
/// whole into memory and waited for by a person) are not.
extension TransferTable {
    /// The buffers of a download about to start: under a limit of `rate`, sized to its share of it
    /// (see `RateLimiter.buffers`), shared by the `runningDownloads` now, this one included; else
    /// `EngineCore.downloadBufferSize(concurrency:)` for curl's and the kernel's own.
    static func downloadBuffers(rate: Int?, concurrency: Int, runningDownloads: Int) -> (kernel: Int?, curl: Int) {
        let unlimited = EngineCore.downloadBufferSize(concurrency: concurrency)
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

    /// When the loop must wake to let paused transfers go on (nil: none waits for the limit).
    func rateWake(now: Date) -> Date? {
        guard let limiter = rateLimiter, !limiter.waiting.isEmpty else { return nil }
        let nanoseconds = limiter.bucket.nanoseconds(untilHolding: limiter.bucket.resumeLevel, now: RateLimiter.now())
        return now.addingTimeInterval(Double(nanoseconds) / 1e9)
    }
}
