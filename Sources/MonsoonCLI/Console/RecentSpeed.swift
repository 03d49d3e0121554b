import FoundationEssentials

/// A speed measured over the last few seconds, from when bytes arrived: a rate limiter (curl's,
/// or the engine's token bucket) lets them through in bursts, and progress comes every 100 ms, so
/// a speed sampled over half a second swings by half, and an ETA with it.
struct RecentSpeed {
    /// How far back a speed looks: long enough to even out bursts, short enough to follow a change.
    static let window: TimeInterval = 5
    /// Byte counts at the times they changed, oldest first, over the window and one before it.
    private var samples: [(time: Date, bytes: Int)] = []

    /// Notes the count at `time`; a count that did not change is no arrival.
    mutating func add(_ bytes: Int, at time: Date) {
        if let last = samples.last, last.bytes == bytes { return }
        // A count that went down (a download restarted) starts over.
        if let last = samples.last, last.bytes > bytes { samples = [] }
        samples.append((time, bytes))
        let start = time.addingTimeInterval(-Self.window)
        while samples.count > 2, samples[1].time <= start { samples.removeFirst() }
    }

    /// Bytes a second between the first and the last arrival, so a burst that just came is counted
    /// over the time it took, not over the moment since it came. Once nothing has come for more
    /// than three usual gaps between arrivals, the wait counts too: a stalled download slows down.
    func perSecond(at now: Date) -> Double {
        guard let first = samples.first, let last = samples.last, samples.count > 1 else { return 0 }
        let span = last.time.timeIntervalSince(first.time)
        guard span > 0 else { return 0 }
        let quiet = now.timeIntervalSince(last.time)
        let gap = span / Double(samples.count - 1)
        return Double(last.bytes - first.bytes) / (quiet > 3 * gap ? span + quiet : span)
    }
}
