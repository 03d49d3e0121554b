import Foundation

/// The in-memory fetches waiting to start: those queued now, those whose retry waits for its
/// time on the engine's clock, and how many run.
///
/// The loop owns one and routes to it; only the transfer thread touches it. The loop starts the
/// transfers (`next(limit:)` says which job) and tells it when one ends; fetches have their own
/// limit, so a feed's refresh never waits behind media.
struct FetchLine {
    private(set) var queued: [FetchJob] = []
    /// Fetches posted to retry later, until their `notBefore` on the engine's clock.
    private(set) var waiting: [FetchJob] = []
    private(set) var running = 0

    /// Takes in a posted fetch.
    /// - Returns: whether it is queued now (false: it waits for its time, or was cancelled).
    mutating func submit(_ job: FetchJob, now: Date) -> Bool {
        guard !job.isCompleted else { return false }   // cancelled before it got here
        if let at = job.notBefore, at > now {
            waiting.append(job)   // the poll wakes for it (`nextDue`)
            return false
        }
        queued.append(job)
        return true
    }

    /// Queues the waiting fetches whose time has come, in the order they were posted.
    /// - Returns: whether any was due.
    mutating func promoteDue(now: Date) -> Bool {
        guard let due = nextDue, due <= now else { return false }
        let isDue = { (job: FetchJob) in (job.notBefore ?? now) <= now }
        queued += waiting.filter(isDue)   // one cancelled meanwhile is skipped at its start
        waiting.removeAll(where: isDue)
        return true
    }

    /// When the first waiting fetch is due, if one waits.
    var nextDue: Date? {
        waiting.compactMap(\.notBefore).min()
    }

    /// Cancels the fetch `token` if it has not started.
    /// - Returns: whether it was found here (false: it runs, or has ended).
    mutating func cancelWaiting(token: Int) -> Bool {
        if let index = queued.firstIndex(where: { $0.token == token }) {
            queued.remove(at: index).complete(.cancelled)
            return true
        }
        if let index = waiting.firstIndex(where: { $0.token == token }) {
            waiting.remove(at: index).complete(.cancelled)
            return true
        }
        return false
    }

    /// The next fetch to start while fewer than `limit` run, counted as running (a cancelled one
    /// is skipped); nil when none may start.
    mutating func next(limit: Int) -> FetchJob? {
        while running < limit, !queued.isEmpty {
            let job = queued.removeFirst()
            if job.isCompleted { continue }
            running += 1
            return job
        }
        return nil
    }

    /// A running fetch ended (or its transfer never started): its slot is free.
    mutating func ended() {
        running -= 1
    }

    /// At shutdown: every fetch not yet started is cancelled.
    mutating func cancelAll() {
        for job in queued + waiting { job.complete(.cancelled) }
        queued.removeAll()
        waiting.removeAll()
    }
}
