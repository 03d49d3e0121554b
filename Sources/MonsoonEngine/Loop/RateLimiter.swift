import FoundationEssentials
import Dispatch

/// The run's rate limit: the `TokenBucket` every download's write callback spends from, and the
/// transfers paused because it was empty, in the order they ran out.
///
/// One for the whole loop, so the limit holds over all transfers together, however many run.
/// The loop refills it each turn and lets the paused transfers go on, first paused first, while
/// it holds anything (`TransferTable.pace`): each gets its turn, none starves.
///
/// - Important: confined to the transfer thread, where curl's write callback spends from it
///   through an unowned reference (the loop keeps it for as long as it runs, longer than any
///   transfer).
final class RateLimiter {
    var bucket: TokenBucket
    /// Transfers paused for the limit, first paused first, each once (`inLine`).
    /// May hold transfers that ended meanwhile: skipped when their turn comes.
    private(set) var waiting: [Transfer] = []
    private var inLine: Set<ObjectIdentifier> = []

    init(bytesPerSecond: Int, now: UInt64 = RateLimiter.now()) {
        bucket = TokenBucket(rate: bytesPerSecond, now: now)
    }

    /// Puts a paused transfer in line, unless it is already.
    func join(_ transfer: Transfer) {
        if inLine.insert(ObjectIdentifier(transfer)).inserted { waiting.append(transfer) }
    }

    /// The first in line, taken out of it.
    func next() -> Transfer? {
        guard !waiting.isEmpty else { return nil }
        let transfer = waiting.removeFirst()
        inLine.remove(ObjectIdentifier(transfer))
        return transfer
    }

    /// Empties the line (the last references to some transfers: released on the caller's thread).
    func clear() {
        waiting.removeAll()
        inLine.removeAll()
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
