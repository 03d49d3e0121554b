import CCrypto
import CCurl
import FoundationEssentials

/// Body bytes that came while the part was being prepared (`count` of them), written once it is
/// open. A small file arrives whole meanwhile, and its slot and connection go on to the next
/// download instead of waiting, paused, for the disk worker. One buffer per attempt, made at its
/// first chunk and never grown; copied into with `memcpy` (an array's append goes byte by byte).
/// The buffer's size is charged to `budget` when it is made and given back when it goes.
struct EarlyBody {
    var buffer: UnsafeMutableRawBufferPointer?
    var count = 0
    /// What every attempt's buffer may take together (the loop's). Held strongly: the
    /// transfer's `deinit` gives back its buffer.
    var budget: EarlyBudget?

    /// Gives the buffer back to the budget.
    mutating func drop() {
        if let buffer {
            if let budget { budget.give(buffer) } else { buffer.deallocate() }
        }
        buffer = nil
        count = 0
    }
}

/// The body that comes while a part is being prepared (`Transfer.early`), written once it is open.
extension Transfer {
    /// A chunk of the body while the part is being prepared: kept, or held by curl (paused).
    func receiveEarly(_ data: UnsafeRawPointer, _ count: Int) -> Int {
        // Past the buffer's room, the run's budget for such bytes, the disk's allowance (which
        // they spend now) or the file's limit (which the part's writes enforce), curl keeps the
        // bytes and delivers them again once unpaused, to the part.
        guard !state.paused.contains(.preparing), early.count + count <= Self.earlyLimit,
              progress.fileSize + early.count + count <= limits.maxFileBytes,
              let budget = early.budget, count <= limits.volume?.allowance ?? Int.max else {
            return pauseEarly()
        }
        if early.buffer == nil {
            // Room for the whole file when its size is known and small, else the limit; no more
            // than the budget has left, and charged to it whole.
            let capacity = min(budget.available, max(count, min(Self.earlyLimit, (progress.total ?? Self.earlyLimit) - progress.fileSize)))
            guard capacity >= count, let buffer = budget.take(capacity) else { return pauseEarly() }
            early.buffer = buffer
        }
        guard let buffer = early.buffer, early.count + count <= buffer.count else {
            return pauseEarly()   // more than the announced size: the part takes the rest
        }
        if let rateLimiter = limits.rateLimiter, !rateLimiter.bucket.take(count) {
            return pauseEarly(.rate)   // lifted when the part is ready, if the limit let it go by then
        }
        (buffer.baseAddress! + early.count).copyMemory(from: data, byteCount: count)
        if let digest = progress.digest { monsoon_digest_update(digest, data, count) }
        early.count += count
        if let volume = limits.volume {
            volume.allowance -= count
            volume.written += count
        }
        return count
    }

    /// Holds the rest in curl until the part is ready; a part not asked for yet is asked for now
    /// (the body will not come whole into the buffer).
    private func pauseEarly(_ also: PauseReasons = []) -> Int {
        handle(.paused(also.union(.preparing)))
        if case .askForPart(let part) = handle(.partWanted) { engine?.askForPart(part) }
        return monsoon_write_pause()
    }

    /// Lends the buffer, whole body and all, to the disk worker (`WholeFile`); its size stays
    /// charged to the budget until the worker's answer brings it back (`EarlyBudget.giveBack`).
    func lendEarly() -> WholeFile.Body? {
        guard let buffer = early.buffer else { return nil }
        let body = WholeFile.Body(buffer: buffer, count: early.count)
        early.buffer = nil
        early.count = 0
        return body
    }

    /// Writes the bytes that came while the part was prepared, now that it is open (`part.fd`).
    /// The disk's allowance was spent on them as they came.
    func writeEarly() {
        guard let buffer = early.buffer else { return }
        let count = early.count
        defer { early.drop() }
        let (written, error) = FileSystem.writeAll(part.fd, buffer.baseAddress!, count)
        if let error {
            abort(FileSystem.error("cannot write \(part.path ?? "the part file")", errno: error))
            limits.volume?.giveBack(count - written)
            return
        }
        progress.fileSize += count
        progress.thisAttempt += count
    }

    /// Drops the bytes that came while the part was prepared, never to be written (the attempt
    /// stopped, or its part could not be made): the disk's allowance they spent is given back.
    /// On the transfer thread, while the loop's volumes live (not from `deinit`).
    func discardEarly() {
        limits.volume?.giveBack(early.count)
        early.drop()
    }

    /// Whether an attempt that ended with its part held back brought its whole body, cleanly:
    /// then it is written in one pass; else its part is asked for now and the attempt ends once it
    /// is ready, as any other.
    func cameWhole(code: CURLcode) -> Bool {
        guard let held = state.phase.partWait?.held else { return false }
        return code == CURLE_OK && head.isSuccess && early.buffer != nil && early.count == held.total
    }
}

/// What the body buffers of attempts whose parts are being prepared may hold together
/// (`EarlyBody`): a slow disk worker makes attempts wait, not memory grow.
///
/// - Important: confined to the transfer thread, like the transfers that spend from it.
final class EarlyBudget {
    private(set) var available: Int
    /// Buffers given back, kept for the next bodies: freeing a 64 KiB block makes malloc consolidate
    /// its heap, at every small file. At most `spareLimit` of them, on top of the budget.
    private var spare: [UnsafeMutableRawBufferPointer] = []
    static let spareLimit = 8

    init(bytes: Int) { available = bytes }

    /// The engine's budget: sixteen of the largest bodies (4 MiB), so eight transfers fill theirs
    /// while as many wait for the disk worker to finish a commit and write them. A body that finds
    /// the budget spent goes through a part: its own row save, the loop's writes, the placer's rename.
    static let total = 16 * Transfer.earlyLimit

    /// What a buffer of `count` bytes is charged: at least 64 KiB, so that the budget bounds how
    /// many bodies wait too (4 MiB would hold four thousand bodies of a kilobyte, each with its
    /// row and, for a whole file, its descriptor and `fsync` on the disk worker).
    static func charge(_ count: Int) -> Int { max(count, 64 << 10) }

    deinit {
        for buffer in spare { buffer.deallocate() }
    }

    /// A buffer of at least `capacity` bytes (a spare one, the smallest that fits, else a new one),
    /// its whole size charged (`charge`); nil when the budget has not that much left.
    func take(_ capacity: Int) -> UnsafeMutableRawBufferPointer? {
        var best: Int?
        // Not one more than twice as large: charged whole, it would crowd the budget.
        for (index, buffer) in spare.enumerated() where buffer.count >= capacity && buffer.count <= 2 * capacity && Self.charge(buffer.count) <= available {
            if best.map({ buffer.count < spare[$0].count }) ?? true { best = index }
        }
        let buffer: UnsafeMutableRawBufferPointer
        if let best {
            buffer = spare.remove(at: best)
        } else {
            guard Self.charge(capacity) <= available else { return nil }
            buffer = .allocate(byteCount: capacity, alignment: 16)
        }
        available -= Self.charge(buffer.count)
        return buffer
    }

    /// Takes a buffer back (kept as a spare, or freed).
    func give(_ buffer: UnsafeMutableRawBufferPointer) {
        available += Self.charge(buffer.count)
        if spare.count < Self.spareLimit { spare.append(buffer) } else { buffer.deallocate() }
    }

    /// Takes back a buffer lent to the disk worker (`Transfer.lendEarly`), with its answer.
    func giveBack(_ body: WholeFile.Body) {
        give(body.buffer)
    }
}
