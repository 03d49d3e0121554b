import FoundationEssentials

/// Deadlines by key, the earliest first: a binary min-heap with an index of where each key sits,
/// so setting, moving and cancelling a deadline cost O(log n) and the next one O(1).
///
/// The loop keeps its timers here (a download's retry, a host's hold), as swift-nio's event loop
/// keeps its scheduled tasks in a priority queue: the poll's timeout and what is due are then
/// found without walking every waiting download on every turn.
struct DeadlineHeap<Key: Hashable> {
    private struct Entry {
        var key: Key
        var at: Date
        /// Breaks ties in the order deadlines were set, so equal times come due in a stable order.
        var order: UInt64
    }

    private var heap: [Entry] = []
    private var positions: [Key: Int] = [:]
    private var nextOrder: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    /// The earliest deadline, if any.
    var next: (key: Key, at: Date)? { heap.first.map { ($0.key, $0.at) } }

    /// When `key` is due, if it has a deadline.
    func deadline(of key: Key) -> Date? { positions[key].map { heap[$0].at } }

    /// Sets `key`'s deadline, moving it if it had one.
    mutating func schedule(_ key: Key, at: Date) {
        nextOrder &+= 1
        if let index = positions[key] {
            let earlier = at < heap[index].at
            heap[index].at = at
            heap[index].order = nextOrder
            if earlier { siftUp(index) } else { siftDown(index) }
            return
        }
        heap.append(Entry(key: key, at: at, order: nextOrder))
        positions[key] = heap.count - 1
        siftUp(heap.count - 1)
    }

    /// Removes `key`'s deadline; returns when it was due (nil: it had none).
    @discardableResult
    mutating func cancel(_ key: Key) -> Date? {
        guard let index = positions[key] else { return nil }
        let at = heap[index].at
        remove(at: index)
        return at
    }

    /// Removes and returns the keys due at `now` or before, the earliest first.
    mutating func popDue(now: Date) -> [Key] {
        var due: [Key] = []
        while let first = heap.first, first.at <= now {
            due.append(first.key)
            remove(at: 0)
        }
        return due
    }

    private mutating func remove(at index: Int) {
        positions[heap[index].key] = nil
        let last = heap.removeLast()
        guard index < heap.count else { return }
        heap[index] = last
        positions[last.key] = index
        siftDown(index)
        siftUp(index)
    }

    private func precedes(_ a: Int, _ b: Int) -> Bool {
        heap[a].at < heap[b].at || (heap[a].at == heap[b].at && heap[a].order < heap[b].order)
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        positions[heap[a].key] = a
        positions[heap[b].key] = b
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            let child = right < heap.count && precedes(right, left) ? right : left
            guard precedes(child, parent) else { return }
            swapAt(child, parent)
            parent = child
        }
    }
}
