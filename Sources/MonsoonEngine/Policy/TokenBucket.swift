/// The rate limit over a whole run (`EngineConfiguration.maxBytesPerSecond`): a token bucket
/// of bytes, shared by every download. Pure: the caller gives the time.
///
/// Time turns into tokens at `rate` a second, up to `capacity`. The write callback takes a chunk
/// whenever the bucket holds anything (`take`), so tokens may go below zero by less than one
/// chunk, a debt the next refills repay: a chunk larger than the bucket never waits for ever, and
/// over any span the bytes taken stay within `capacity` plus one chunk of `rate` times the span.
/// A transfer that finds the bucket empty is paused, and let go once the bucket holds
/// `resumeLevel` again (`nanoseconds(untilHolding:)` says when), not at its first byte: fewer,
/// larger turns.
///
/// `capacity` is a quarter of a second's worth: the loop may wake that late without losing
/// tokens (a bucket that is full wastes what it would earn), and a burst after a quiet spell is
/// 5% of five seconds. `resumeLevel` is an eighth of that, about 30 ms of the rate. A new bucket
/// is empty.
struct TokenBucket: Equatable {
    /// Bytes a second.
    let rate: Int
    /// The most the bucket holds.
    let capacity: Int
    /// What the bucket must hold before paused transfers are let go again.
    let resumeLevel: Int
    /// Bytes that may be taken now; below zero after a chunk taken on credit.
    private(set) var tokens: Int
    /// The monotonic time (nanoseconds) up to which time has been turned into tokens.
    private(set) var creditedUntil: UInt64

    /// An empty bucket for `rate` bytes a second (at least 1) at `now`: a run starts at the
    /// rate, not with a burst.
    init(rate: Int, now: UInt64) {
        self.rate = max(1, rate)
        capacity = max(1, self.rate / 4)
        resumeLevel = max(1, capacity / 8)
        tokens = 0
        creditedUntil = now
    }

    /// Adds what the time since the last refill earned, up to `capacity`. Only whole bytes are
    /// credited: the time of a fraction of a byte stays for the next refill, so many refills
    /// earn what one would.
    mutating func refill(now: UInt64) {
        guard now > creditedUntil else { return }
        // elapsed × rate / 1e9 through a 128-bit product; a quotient too large for 64 bits (years
        // at an absurd rate) fills the bucket anyway.
        let product = (now - creditedUntil).multipliedFullWidth(by: UInt64(rate))
        let room = UInt64(capacity - tokens)
        guard product.high < 1_000_000_000 else { return fill(now: now) }
        let (earned, _) = UInt64(1_000_000_000).dividingFullWidth(product)
        guard earned < room else { return fill(now: now) }
        tokens += Int(earned)
        // The time those whole bytes took, rounded down: never past `now`.
        let (spent, _) = UInt64(rate).dividingFullWidth(earned.multipliedFullWidth(by: 1_000_000_000))
        creditedUntil += spent
    }

    private mutating func fill(now: UInt64) {
        tokens = capacity
        creditedUntil = now
    }

    /// Takes `count` bytes when the bucket holds anything (perhaps going below zero); false
    /// when it is empty: the chunk must wait. An integer compare: the write callback's.
    @inline(__always)
    mutating func take(_ count: Int) -> Bool {
        guard tokens > 0 else { return false }
        tokens -= count
        return true
    }

    /// Whether paused transfers may be let go now.
    var mayResume: Bool { tokens >= resumeLevel }

    /// How long until the bucket holds `level` bytes (0: it does), as of the last refill at `now`.
    func nanoseconds(untilHolding level: Int, now: UInt64) -> UInt64 {
        let wanted = min(level, capacity)
        guard tokens < wanted else { return 0 }
        let missing = UInt64(wanted - tokens)
        // Rounded up: at that instant the bytes are earned.
        let (quotient, remainder) = UInt64(rate).dividingFullWidth(missing.multipliedFullWidth(by: 1_000_000_000))
        let (due, overflow) = creditedUntil.addingReportingOverflow(quotient + (remainder > 0 ? 1 : 0))
        if overflow { return UInt64.max - now }
        return due > now ? due - now : 0
    }
}
