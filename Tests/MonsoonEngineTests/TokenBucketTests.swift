import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// The rate limit's decisions, without a clock: time is given in nanoseconds.
@Suite struct TokenBucketTests {
    static let second: UInt64 = 1_000_000_000

    @Test func timeEarnsTheRateUpToAQuarterOfASecondsWorth() {
        var bucket = TokenBucket(rate: 1_000, now: 0)
        #expect(bucket.capacity == 250 && bucket.resumeLevel == 31)
        #expect(bucket.tokens == 0, "a run starts at the rate, not with a burst")
        bucket.refill(now: Self.second / 10)
        #expect(bucket.tokens == 100)
        bucket.refill(now: Self.second / 10)
        #expect(bucket.tokens == 100, "the same instant earns nothing more")
        bucket.refill(now: 5 * Self.second)
        #expect(bucket.tokens == 250, "a quiet spell fills the bucket, no more")
        bucket.refill(now: 5 * Self.second + Self.second / 2)
        #expect(bucket.tokens == 250, "time spent full is not saved up")
    }

    @Test func aChunkIsTakenWhileAnythingIsLeftAndTheDebtIsRepaidFirst() {
        var bucket = TokenBucket(rate: 1_000, now: 0)
        var taken = bucket.take(16_384)
        #expect(!taken, "an empty bucket: the chunk waits")
        bucket.refill(now: Self.second / 100)
        #expect(bucket.tokens == 10)
        taken = bucket.take(16_384)
        #expect(taken, "a chunk larger than the bucket never waits for ever")
        #expect(bucket.tokens == 10 - 16_384)
        taken = bucket.take(1)
        #expect(!taken)
        // The debt, then the level to resume at: 16,374 + 31 bytes at 1,000 a second.
        #expect(bucket.nanoseconds(untilHolding: bucket.resumeLevel, now: Self.second / 100) == 16_405_000_000)
        bucket.refill(now: Self.second / 100 + 16_405_000_000)
        #expect(bucket.tokens == bucket.resumeLevel && bucket.mayResume)
        #expect(bucket.nanoseconds(untilHolding: bucket.resumeLevel, now: Self.second / 100 + 16_405_000_000) == 0)
    }

    @Test func theWaitIsRoundedUpAndCountsFromTheLastRefill() {
        var bucket = TokenBucket(rate: 3, now: 0)
        #expect(bucket.capacity == 1 && bucket.resumeLevel == 1)
        // One byte at 3 a second: 333,333,333.3 ns, so 333,333,334.
        #expect(bucket.nanoseconds(untilHolding: 1, now: 0) == 333_333_334)
        #expect(bucket.nanoseconds(untilHolding: 1, now: 100_000_000) == 233_333_334)
        #expect(bucket.nanoseconds(untilHolding: 1, now: Self.second) == 0)
        bucket.refill(now: 333_333_334)
        #expect(bucket.tokens == 1)
    }

    /// Fractions of a byte are not lost between refills: a thousand refills a second at 1,500
    /// bytes a second earn 1,500 bytes, not 1,000.
    @Test func manySmallRefillsEarnWhatOneWould() {
        var bucket = TokenBucket(rate: 1_500, now: 0)
        var taken = 0
        for millisecond in 1...1_000 {
            bucket.refill(now: UInt64(millisecond) * 1_000_000)
            let tokens = bucket.tokens
            if tokens > 0, bucket.take(tokens) { taken += tokens }
        }
        #expect(taken == 1_500)
    }

    /// A greedy reader of 16 KiB chunks, refilled at uneven instants (a loop that wakes early or
    /// late): over every span the bytes taken stay within the rate times the span, plus the
    /// capacity and one chunk, and over the whole run they come to the rate.
    @Test func overAnySpanTheBytesStayWithinTheRate() {
        let rate = 2 << 20
        var bucket = TokenBucket(rate: rate, now: 0)
        var generator = SeededGenerator(seed: 22)
        var now: UInt64 = 0
        var takes: [(at: UInt64, bytes: Int)] = []
        while now < 10 * Self.second {
            now += 1_000_000 + generator.next() % 200_000_000   // 1 to 201 ms
            bucket.refill(now: now)
            while bucket.take(16_384) { takes.append((now, 16_384)) }
        }
        let total = takes.reduce(0) { $0 + $1.bytes }
        let ideal = Double(rate) * Double(now) / 1e9
        #expect(Double(total) <= ideal + Double(16_384))
        #expect(Double(total) >= ideal * 0.95, "late wakes lose at most what a full bucket cannot hold: \(total) of \(ideal)")
        for (index, first) in takes.enumerated() {
            for end in [first.at + Self.second / 2, first.at + 5 * Self.second] {
                let bytes = takes[index...].prefix { $0.at <= end }.reduce(0) { $0 + $1.bytes }
                let allowed = Double(rate) * Double(end - first.at) / 1e9 + Double(bucket.capacity + 2 * 16_384)
                #expect(Double(bytes) <= allowed, "\(bytes) bytes from \(first.at) to \(end)")
            }
        }
    }

    @Test func extremeRatesAndTimesNeitherTrapNorOverflow() {
        var bucket = TokenBucket(rate: Int.max, now: 0)
        bucket.refill(now: UInt64.max)
        #expect(bucket.tokens == bucket.capacity)
        let taken = bucket.take(Int.max / 8)
        #expect(taken)
        #expect(bucket.nanoseconds(untilHolding: bucket.capacity, now: UInt64.max) == 0, "as late as the clock goes")
        #expect(bucket.nanoseconds(untilHolding: bucket.capacity, now: 0) == UInt64.max)
        var slow = TokenBucket(rate: 0, now: 5)
        #expect(slow.rate == 1)
        slow.refill(now: 4)
        #expect(slow.tokens == 0, "a clock that went back earns nothing")
    }

    /// Under a limit, what a connection may hold is a fraction of a second of its share, bounded.
    @Test func buffersAreAShareOfTheLimit() {
        let two = RateLimiter.buffers(rate: 2 << 20, sharedBy: 1, unlimited: 256 << 10)
        #expect(two.kernel == 1 << 20 && two.curl == 256 << 10, "half and a quarter of a second, curl's no more than unlimited")
        let eight = RateLimiter.buffers(rate: 1_536 << 10, sharedBy: 8, unlimited: 256 << 10)
        #expect(eight.kernel == 96 << 10 && eight.curl == 48 << 10)
        let slow = RateLimiter.buffers(rate: 10_000, sharedBy: 4, unlimited: 256 << 10)
        #expect(slow.kernel == 16 << 10 && slow.curl == 16 << 10, "never under 16 KiB")
        #expect(RateLimiter.buffers(rate: 1 << 40, sharedBy: 0, unlimited: 256 << 10).kernel == 4 << 20)
    }
}
