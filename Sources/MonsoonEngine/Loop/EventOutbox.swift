import FoundationEssentials

/// What the loop has to report: this turn's events until they are handed out, when progress
/// was last reported (it is throttled), and the callers waiting for the queue to be idle.
///
/// The loop owns one and routes to it; only the transfer thread touches it. The loop decides
/// what to report and when it is idle; this keeps what waits to be sent and who waits.
struct EventOutbox {
    /// Progress is reported at most this often (so about ten a second per download).
    static let progressInterval: TimeInterval = 0.1

    private(set) var pending: [DownloadEvent] = []
    private(set) var lastProgress = Date.distantPast
    private(set) var idleWaiters: [CheckedContinuation<Void, Never>] = []

    mutating func append(_ event: DownloadEvent) {
        pending.append(event)
    }

    /// This turn's events, handed out once; nil when there are none.
    mutating func take() -> [DownloadEvent]? {
        guard !pending.isEmpty else { return nil }
        defer { pending = [] }   // not keepingCapacity: the taker shares the buffer
        return pending
    }

    /// Whether progress is due at `now` (always when `force`); if so, it counts as reported now.
    mutating func progressDue(now: Date, force: Bool) -> Bool {
        guard force || now.timeIntervalSince(lastProgress) >= Self.progressInterval else { return false }
        lastProgress = now
        return true
    }

    /// When progress is next due (the poll wakes for it while transfers run).
    var nextProgress: Date { lastProgress.addingTimeInterval(Self.progressInterval) }

    mutating func waitForIdle(_ waiter: CheckedContinuation<Void, Never>) {
        idleWaiters.append(waiter)
    }

    /// The callers waiting for the queue to be idle, taken to be resumed.
    mutating func takeIdleWaiters() -> [CheckedContinuation<Void, Never>] {
        defer { idleWaiters.removeAll() }
        return idleWaiters
    }
}
