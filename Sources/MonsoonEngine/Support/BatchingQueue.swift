import FoundationEssentials
import Dispatch

/// A serial queue that hands its handler everything submitted since the handler last ran,
/// in order: while one batch is handled, the next gathers (group commit).
final class BatchingQueue<Item: Sendable>: Sendable {
    private struct Pending {
        var items: [Item] = []
        var scheduled = false
    }

    private let queue: DispatchQueue
    private let pending = Locked(Pending())
    private let handle: @Sendable ([Item]) -> Void

    init(label: String, handle: @escaping @Sendable ([Item]) -> Void) {
        queue = DispatchQueue(label: label)
        self.handle = handle
    }

    func submit(_ items: [Item]) {
        guard !items.isEmpty else { return }
        let schedule = pending.withLock { pending -> Bool in
            // Taken whole when nothing waits: no copy of a large batch.
            if pending.items.isEmpty { pending.items = items } else { pending.items.append(contentsOf: items) }
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Returns once everything submitted so far is handled.
    func waitUntilDone() {
        queue.sync {}
    }

    private func drain() {
        let items = pending.withLock { pending -> [Item] in
            pending.scheduled = false
            defer { pending.items = [] }   // handed off whole: keeping capacity would allocate another buffer that size
            return pending.items
        }
        handle(items)
    }
}
