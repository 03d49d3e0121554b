import Foundation

/// The queued downloads in start order: higher priority first, then enqueue order.
///
/// A sorted array with binary-search insert and remove: starting, pausing and
/// requeueing stay cheap with a hundred thousand entries queued.
struct QueueIndex {
    struct Key: Comparable, Hashable {
        var priority: Int
        var sequence: Int

        static func < (lhs: Key, rhs: Key) -> Bool {
            lhs.priority != rhs.priority ? lhs.priority > rhs.priority : lhs.sequence < rhs.sequence
        }
    }

    struct Entry {
        var key: Key
        var id: DownloadID
        var host: String
    }

    private(set) var entries: [Entry] = []

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    mutating func insert(_ id: DownloadID, key: Key, host: String) {
        entries.insert(Entry(key: key, id: id, host: host), at: position(of: key))
    }

    mutating func remove(key: Key) {
        let index = position(of: key)
        if index < entries.count, entries[index].key == key { entries.remove(at: index) }
    }

    private func position(of key: Key) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// Picks which queued downloads start next. Pure: the engine performs the answer.
struct Scheduler: Equatable {
    var maxConcurrent: Int
    var maxPerHost: Int?

    /// The downloads to start now, in order.
    ///
    /// - Parameters:
    ///   - running: transfers running in all.
    ///   - runningPerHost: transfers running per host.
    ///   - hostsOnHold: hosts in backoff after a 429 or 503, with the time it ends.
    func select(from queue: QueueIndex, running: Int, runningPerHost: [String: Int], hostsOnHold: [String: Date], now: Date) -> [DownloadID] {
        var free = maxConcurrent - running
        guard free > 0, !queue.isEmpty else { return [] }
        var perHost = runningPerHost
        var chosen: [DownloadID] = []
        for entry in queue.entries {
            if let until = hostsOnHold[entry.host], until > now { continue }
            if let limit = maxPerHost, perHost[entry.host, default: 0] >= limit { continue }
            chosen.append(entry.id)
            perHost[entry.host, default: 0] += 1
            free -= 1
            if free == 0 { break }
        }
        return chosen
    }
}
