import Foundation

/// The run's rate limit: the `TokenBucket` every download's write callback spends from, and the
/// transfers paused because it was empty, in the order they ran out.
///
/// One for the whole loop, so the limit holds over all transfers together, however many run.
/// The loop refills it each turn and lets the paused transfers go on, first paused first, while
/// it holds anything (`EngineCore.paceTransfers`): each gets its turn, none starves.
///
/// - Important: confined to the transfer thread, where curl's write callback spends from it
///   through an unowned reference (the loop keeps it for as long as it runs, longer than any
///   transfer).
final class RateLimiter {
    var bucket: TokenBucket
    /// Transfers paused for the limit, first paused first; each also has `waitingForRate` set.
    /// May hold transfers that ended meanwhile: skipped when their turn comes.
    var waiting: [Transfer] = []

    init(bytesPerSecond: Int, now: UInt64 = RateLimiter.now()) {
        bucket = TokenBucket(rate: bytesPerSecond, now: now)
    }

    /// What a download's connection may hold for it under a limit of `rate` bytes a second shared
    /// by `downloads` running downloads: the kernel's receive buffer (SO_RCVBUF) half a second of
    /// its share, curl's a quarter (`curl`, at most the unlimited size), each at least 16 KiB.
    ///
    /// A paused transfer's socket is not read, so what the buffers hold is what the server may send
    /// ahead of the limit. Left to itself, the kernel grows a receive buffer when reads come in
    /// bursts on a fast link, as a paced transfer's do, to MiBs per connection, taken at line speed
    /// and read at the limit seconds later: the burst a limit is there to prevent. Half a second of
    /// the share (the kernel doubles it for its bookkeeping) still keeps the share flowing over a
    /// link whose round trip is under half a second.
    static func buffers(rate: Int, sharedBy downloads: Int, unlimited: Int) -> (kernel: Int, curl: Int) {
        let share = rate / max(1, downloads)
        return (min(4 << 20, max(16 << 10, share / 2)), min(unlimited, max(16 << 10, share / 4)))
    }

    /// The monotonic clock, in nanoseconds.
    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }
}
