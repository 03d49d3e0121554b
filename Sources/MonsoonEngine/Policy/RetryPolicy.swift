/// When and whether a failed attempt is tried again.
///
/// A pure value: the engine asks it, then acts on the answer.
public struct RetryPolicy: Sendable, Equatable {
    /// Retries after the first attempt ("retries N" means N + 1 attempts at most).
    public var maxRetries: Int = 5
    /// The first backoff, in seconds; it doubles with each failure in a row.
    public var baseDelay: Double = 1
    /// The longest backoff, in seconds. A `Retry-After` longer than this fails
    /// the download with the reason, so the user can retry later.
    public var maxDelay: Double = 180
    /// The backoff is multiplied by a random factor in 1 ± jitter, so many
    /// downloads failing together do not come back together.
    public var jitter: Double = 0.25

    /// A policy with the given limits; delays are in seconds, `jitter` a fraction (0.25: ± 25 %).
    public init(maxRetries: Int = 5, baseDelay: Double = 1, maxDelay: Double = 180, jitter: Double = 0.25) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.jitter = jitter
    }

    /// A failed attempt, as the policy sees it.
    struct Failure: Equatable {
        var error: DownloadError
        /// Worth trying again (network trouble, 408, 429, 5xx, truncation).
        var isTransient: Bool
        /// The server's `Retry-After`, in seconds from now.
        var retryAfter: Double?
        /// The attempt wrote body bytes before it broke.
        var madeProgress: Bool
        /// The server could not be reached at all (unknown host, connection refused).
        var isConnectionFailure = false
        /// No connection could be made (curl's code 7: refused, or no route).
        var isRefusal = false
        /// The host answered this download earlier in the run, or its part holds bytes from an
        /// earlier one: a refusal now is a server restarting, worth the whole backoff.
        var hostAnswered = false
    }

    /// Retries of a refusal from a host that has answered nothing: a server that is not running
    /// (or a wrong port) does not start within the minute the whole backoff would wait.
    static let silentHostRetries = 2

    /// The retry counters kept with a download.
    struct Counters: Equatable {
        /// Failed attempts counted against `maxRetries`.
        var attempts = 0
        /// Failures in a row without progress; sets the backoff.
        var backoffLevel = 0
        /// Refusals from a host that has answered nothing, in this run: not stored, so an earlier
        /// run's failures (or this run's timeouts) never count toward `silentHostRetries`.
        var refusals = 0
    }

    enum Decision: Equatable {
        case retry(after: Double, counters: Counters)
        case fail(DownloadError, counters: Counters)
    }

    /// Decides what follows a failed attempt. `random` is in 0..<1 (injected so tests are exact).
    func decide(_ failure: Failure, counters: Counters, random: Double) -> Decision {
        var counters = counters
        guard failure.isTransient else {
            counters.attempts += 1
            return .fail(failure.error, counters: counters)
        }
        if failure.madeProgress {
            // A large file on a flaky link still completes: progress earns a fresh start.
            counters.backoffLevel = 0
        } else {
            counters.attempts += 1
            counters.backoffLevel += 1
        }
        let silentRetries = min(maxRetries, Self.silentHostRetries)
        if failure.isRefusal && !failure.hostAnswered { counters.refusals += 1 }
        if failure.isRefusal && !failure.hostAnswered && counters.refusals > silentRetries {
            var error = failure.error
            if silentRetries > 0 {
                let said = " (retried \(silentRetries == 1 ? "once" : "twice"): nothing answers there)"
                if let hint = error.message.firstRange(of: "; ") {
                    error.message.insert(contentsOf: said, at: hint.lowerBound)
                } else {
                    error.message += said + "; check the address and that the server is running"
                }
            }
            return .fail(error, counters: counters)
        }
        if counters.attempts > maxRetries {
            var error = failure.error
            // Before the hint, so what to do stays last.
            let gaveUp = maxRetries == 0 ? "" : " (gave up after \(maxRetries) \(maxRetries == 1 ? "retry" : "retries"))"
            error.message.insert(contentsOf: gaveUp, at: error.message.firstRange(of: "; ")?.lowerBound ?? error.message.endIndex)
            return .fail(error, counters: counters)
        }
        if let retryAfter = failure.retryAfter {
            if retryAfter > maxDelay {
                let error = DownloadError(
                    .retryAfterTooLong,
                    "\(failure.error.message); the server asked to wait \(Self.describe(seconds: retryAfter)), longer than the \(Self.describe(seconds: maxDelay)) limit: retry later",
                    httpStatus: failure.error.httpStatus)
                return .fail(error, counters: counters)
            }
            return .retry(after: max(0, retryAfter), counters: counters)
        }
        return .retry(after: backoff(level: counters.backoffLevel, random: random), counters: counters)
    }

    /// The backoff for the given level: base × 2^(level − 1), capped, with jitter.
    func backoff(level: Int, random: Double) -> Double {
        let exponent = Double(max(0, min(level - 1, 30)))
        let raw = min(maxDelay, baseDelay * pow2(exponent))
        let factor = 1 + jitter * (2 * random - 1)
        return min(maxDelay, max(0, raw * factor))
    }

    private func pow2(_ exponent: Double) -> Double {
        var result = 1.0
        for _ in 0..<Int(exponent) { result *= 2 }
        return result
    }

    static func describe(seconds: Double) -> String {
        if seconds >= 3600 { return "\(Int(seconds / 3600)) h \(Int(seconds.truncatingRemainder(dividingBy: 3600) / 60)) min" }
        if seconds >= 120 { return "\(Int(seconds / 60)) min" }
        return "\(Int(seconds.rounded())) s"
    }
}
