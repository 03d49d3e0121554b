import FoundationEssentials

/// The queued downloads in start order: higher priority first, then enqueue order.
///
/// A sorted sequence of small sorted chunks: insert and remove cost a binary search
/// and a short move whatever the length, so a state change costs the same with a
/// thousand or a hundred thousand downloads queued. Hosts are small integers (see
/// `HostTable`), so an entry holds no heap storage of its own for short ids.
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
        /// Its URL's host and the one that answered last (see `HostPair`).
        var hosts: HostPair
    }

    /// Small: a start removes the front entry of the first chunk, and `Array.remove(at:)` moves the
    /// rest of it one entry at a time (at 512, 7,000 instructions a start, 1 % of a small file's).
    private static let chunkLimit = 64
    private var chunks: [[Entry]] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Every entry, in start order.
    var entries: [Entry] { chunks.flatMap { $0 } }

    mutating func insert(_ id: DownloadID, key: Key, hosts: HostPair) {
        let entry = Entry(key: key, id: id, hosts: hosts)
        count += 1
        guard !chunks.isEmpty else {
            chunks.append([entry])
            return
        }
        let chunk = chunkIndex(for: key)
        let position = Self.position(of: key, in: chunks[chunk])
        chunks[chunk].insert(entry, at: position)
        if chunks[chunk].count > Self.chunkLimit {
            let upper = Array(chunks[chunk][(Self.chunkLimit / 2)...])
            chunks[chunk].removeSubrange((Self.chunkLimit / 2)...)
            chunks.insert(upper, at: chunk + 1)
        }
    }

    mutating func remove(key: Key) {
        guard !chunks.isEmpty else { return }
        let chunk = chunkIndex(for: key)
        let position = Self.position(of: key, in: chunks[chunk])
        guard position < chunks[chunk].count, chunks[chunk][position].key == key else { return }
        chunks[chunk].remove(at: position)
        count -= 1
        if chunks[chunk].isEmpty { chunks.remove(at: chunk) }
    }

    /// Calls `body` with entries in start order until it returns false.
    func forEach(_ body: (Entry) -> Bool) {
        for chunk in chunks {
            for entry in chunk where !body(entry) { return }
        }
    }

    /// The chunk whose range holds `key`: the first whose last key is not below it.
    private func chunkIndex(for key: Key) -> Int {
        var low = 0
        var high = chunks.count - 1
        while low < high {
            let middle = (low + high) / 2
            if chunks[middle][chunks[middle].count - 1].key < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private static func position(of key: Key, in chunk: [Entry]) -> Int {
        var low = 0
        var high = chunk.count
        while low < high {
            let middle = (low + high) / 2
            if chunk[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// Hosts as small integers, so queue entries and counters stay compact.
struct HostTable {
    private var ids: [String: Int] = [:]

    mutating func id(_ host: String) -> Int {
        if let id = ids[host] { return id }
        let id = ids.count
        ids[host] = id
        return id
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
    ///   - runningPerHost: transfers running per host (a transfer counts on each of its hosts).
    ///   - hostsOnHold: hosts held after a 429, or 503s from several downloads, with the time it
    ///     ends. A download is held when its URL's host or the one that last answered it is.
    func select(from queue: QueueIndex, running: Int, runningPerHost: [Int: Int], hostsOnHold: [Int: Date], now: Date) -> [DownloadID] {
        selectEntries(from: queue, running: running, runningPerHost: runningPerHost, hostsOnHold: hostsOnHold, now: now).map(\.id)
    }

    /// `select`, with each download's queue entry.
    func selectEntries(from queue: QueueIndex, running: Int, runningPerHost: [Int: Int], hostsOnHold: [Int: Date], now: Date) -> [QueueIndex.Entry] {
        var free = maxConcurrent - running
        guard free > 0, !queue.isEmpty else { return [] }
        var perHost = runningPerHost
        var chosen: [QueueIndex.Entry] = []
        queue.forEach { entry in
            let hosts = entry.hosts.each
            if hosts.contains(where: { (hostsOnHold[$0] ?? .distantPast) > now }) { return true }
            if let limit = maxPerHost, hosts.contains(where: { perHost[$0, default: 0] >= limit }) { return true }
            chosen.append(entry)
            for host in hosts { perHost[host, default: 0] += 1 }
            free -= 1
            return free > 0
        }
        return chosen
    }
}
