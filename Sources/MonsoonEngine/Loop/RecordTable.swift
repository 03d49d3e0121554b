import FoundationEssentials

/// The download records of the loop.
///
/// Without a store, every record lives here. With one, only the records that are
/// busy (downloading, waiting to retry, being placed, or just changed) stay in
/// memory; a record at rest is written to the store and dropped, and read back
/// when it is needed. So memory stays flat with a hundred thousand downloads
/// queued: what remains of a queued one is its small `QueueIndex` entry.
struct RecordTable {
    private(set) var hot: [DownloadID: DownloadRecord] = [:]
    /// Saves handed to the disk worker and not yet committed, by download: a record stays in
    /// memory until its last one is, or a read of the store would find an older row.
    private var unsaved: [DownloadID: Int] = [:]
    /// Records are kept in a store (else every record stays here).
    let persistent: Bool
    /// Without a store, the number the next download added takes (its order, and its `d<N>` id).
    private(set) var nextSequence = 0

    init(persistent: Bool) { self.persistent = persistent }

    /// Rows the disk worker read for the command running now (see `EngineCore.withRows`):
    /// the table never reads the store itself, on the transfer thread.
    private var preloaded: [DownloadID: DownloadRecord] = [:]

    /// Whether the download's record is in memory, without the copy of it that `hot[id] == nil`
    /// makes (a dozen strings retained and released, for a look).
    func isHot(_ id: DownloadID) -> Bool { hot.index(forKey: id) != nil }

    /// The record in memory, else the one read for the running command; nil: no such download.
    subscript(id: DownloadID) -> DownloadRecord? {
        get { hot[id] ?? preloaded[id] }
        set { hot[id] = newValue }
    }

    /// Changes a record where it lies (a record read for the running command moves into memory
    /// first). A `records[id]?.field = value` goes through the getter and the setter, copying the
    /// whole record twice; several fields changed at once that way cost that many times over.
    /// - Returns: what `body` returns; nil when there is no such download.
    @discardableResult @inline(__always)   // specialized where it is used: a generic call costs more than the copy it saves
    mutating func update<T>(_ id: DownloadID, _ body: (inout DownloadRecord) -> T) -> T? {
        if !isHot(id) {
            guard let record = preloaded[id] else { return nil }
            hot[id] = record
        }
        return body(&hot[id]!)   // Dictionary's in-place accessor: no copy of the record
    }

    /// Downloads removed here whose row deletion the disk worker has not confirmed, by id and
    /// sequence: a row read before the deletion must not bring them back.
    private var removed: [DownloadID: Set<Int>] = [:]

    /// Rows read for a command, until `endPreload`.
    mutating func preload(_ rows: [DownloadRecord]) {
        for row in rows where !isHot(row.request.id) && removed[row.request.id]?.contains(row.sequence) != true {
            preloaded[row.request.id] = row
        }
    }

    /// The disk worker deleted these rows.
    mutating func deleted(_ rows: [(DownloadID, Int)]) {
        for (id, sequence) in rows {
            removed[id]?.remove(sequence)
            if removed[id]?.isEmpty == true { removed[id] = nil }
        }
    }

    /// Rows read ahead of their downloads' start (`DownloadScheduler.prefetchStarts`): kept in memory
    /// unless the loop holds a newer record, or the download was removed meanwhile. Each is a
    /// queued download at rest, with no save in flight, so its row is all of it; it stays until
    /// it starts (it is then busy), changes (then saved and let go as any other, unless still queued
    /// and run here: `saved`), or leaves the line unstarted (`DownloadScheduler.prefetchStarts` lets it go).
    /// - Returns: the downloads kept.
    mutating func adopt(_ rows: [DownloadRecord]) -> [DownloadID] {
        var kept: [DownloadID] = []
        kept.reserveCapacity(rows.count)
        // Room for them all at once: grown one by one, a `get` of a thousand moved every record
        // it held seven times over before its first download could start.
        hot.reserveCapacity(hot.count + rows.count)
        for row in rows where !isHot(row.request.id) && removed[row.request.id]?.contains(row.sequence) != true && row.status == .queued {
            hot[row.request.id] = row
            kept.append(row.request.id)
        }
        return kept
    }

    /// Downloads whose rows this engine inserted and kept (`keepFresh`), or kept queued after
    /// their save (`saved`), until they start or leave memory: they count toward the limit of those kept.
    private var fresh: Set<DownloadID> = []

    /// The most inserted rows kept in memory waiting for their start (`keepFresh`): they are the
    /// rows as written, so their downloads start without a read of the database, as rows read
    /// ahead do. A count, not a size (about 2.4 MB of records with short URLs and no headers; long
    /// signed URLs or headers make each larger). A `get` of a thousand URLs then never reads its
    /// rows back; the rows of a larger batch past these are read ahead as any others.
    static let freshLimit = 1024

    /// Keeps inserted rows in memory, while fewer than `limit` kept so wait: each is its row as
    /// written, so it stays as a row read ahead does, until it starts (`started`), changes (then
    /// saved and let go as any other, unless still queued and run here: `saved`) or is removed.
    mutating func keepFresh(_ rows: [DownloadRecord], limit: Int = freshLimit) {
        guard persistent, fresh.count < limit else { return }
        fresh.formUnion(adopt(Array(rows.prefix(limit - fresh.count))))
    }

    /// The download started: its record is busy now, no longer one kept waiting.
    mutating func started(_ id: DownloadID) {
        fresh.remove(id)
    }

    mutating func endPreload() {
        preloaded.removeAll()
    }

    /// Lets go of the rows of `ids` read for a command, and only those: one run inside another's.
    mutating func endPreload(_ ids: [DownloadID]) {
        for id in ids { preloaded[id] = nil }
    }

    /// Forgets a record (removed), also one read for the running command; with a store,
    /// until its row's deletion is confirmed, a stale read of it is ignored.
    mutating func remove(_ id: DownloadID, sequence: Int, deletionPending: Bool) {
        hot[id] = nil
        preloaded[id] = nil
        fresh.remove(id)
        if deletionPending { removed[id, default: []].insert(sequence) }
    }

    /// Drops a record at rest from memory, once its row holds all of it (a pinned one when it
    /// is unpinned).
    mutating func evictIfAtRest(_ id: DownloadID) {
        guard persistent, unsaved[id] == nil, let index = hot.index(forKey: id), hot.values[index].isAtRest else { return }   // read where it lies
        guard pinned[id] == nil else {
            evictionDeferred.insert(id)
            return
        }
        hot[id] = nil
        fresh.remove(id)
    }

    /// Records in memory a command batch counts on while the disk worker reads its other rows
    /// (`EngineCore.withRows`), by how many batches: none is let go meanwhile, or its command
    /// would find no download. Unlike `hold`, a pin keeps in memory only what was going: a row
    /// kept waiting (read ahead, or just inserted) stays after it as before it.
    private var pinned: [DownloadID: Int] = [:]
    /// Pinned records that were due to go, when unpinned.
    private var evictionDeferred: Set<DownloadID> = []

    mutating func pin(_ id: DownloadID) {
        pinned[id, default: 0] += 1
    }

    mutating func unpin(_ id: DownloadID) {
        guard let count = pinned[id] else { return }
        guard count == 1 else {
            pinned[id] = count - 1
            return
        }
        pinned[id] = nil
        if evictionDeferred.remove(id) != nil { evictIfAtRest(id) }
    }

    /// A save of `id` was handed to the disk worker.
    mutating func saving(_ id: DownloadID) {
        unsaved[id, default: 0] += 1
    }

    /// Whether a save of `id` handed to the disk worker is not yet confirmed (a `hold` counts
    /// as one).
    func hasSavesInFlight(_ id: DownloadID) -> Bool {
        unsaved[id] != nil
    }

    /// Keeps a record in memory until `letGo`, as a pending save would (a command that waits
    /// for the disk worker, so that a removal meanwhile is seen).
    mutating func hold(_ id: DownloadID) {
        saving(id)
    }

    mutating func letGo(_ id: DownloadID) {
        saved([id])
    }

    /// The worker committed these saves (an id once per save). A record whose last save landed is
    /// let go if at rest, but one queued that this engine `runs` (retried, resumed) is kept as an
    /// inserted row is (`keepFresh`, within its limit): its row is all of it now, and its start
    /// would read it straight back. A retry of many keeps the first thousand, which hold the room
    /// of inserted rows until they start.
    mutating func saved(_ ids: [DownloadID], runs: (DownloadID) -> Bool = { _ in false }) {
        for id in ids {
            guard let count = unsaved[id] else { continue }
            if count > 1 {
                unsaved[id] = count - 1
            } else {
                unsaved[id] = nil
                if !keepsQueued(id, runs: runs) { evictIfAtRest(id) }
            }
        }
    }

    private mutating func keepsQueued(_ id: DownloadID, runs: (DownloadID) -> Bool) -> Bool {
        guard persistent, pinned[id] == nil, fresh.count < Self.freshLimit, let index = hot.index(forKey: id) else { return false }
        guard hot.values[index].status == .queued, hot.values[index].isAtRest, runs(id) else { return false }   // read where it lies
        fresh.insert(id)
        return true
    }
}

extension RecordTable {
    /// Downloads numbered up to `sequence` exist (restored, adopted or inserted by the store):
    /// numbering without a store goes on past them.
    mutating func numbered(through sequence: Int) {
        nextSequence = max(nextSequence, sequence + 1)
    }

    /// Takes in a download the disk worker made: without a store it is numbered here (an
    /// automatic id is the first free `d<N>`) and kept; with one, the store numbered it.
    /// - Returns: the record as numbered.
    mutating func add(_ inserted: DownloadRecord) -> DownloadRecord {
        guard !persistent else {
            numbered(through: inserted.sequence)
            return inserted
        }
        var record = inserted
        if record.request.id.rawValue.isEmpty {
            while self[DownloadID("d\(nextSequence)")] != nil { nextSequence += 1 }
            record.request.id = DownloadID("d\(nextSequence)")
        }
        record.sequence = nextSequence
        nextSequence += 1
        hot[record.request.id] = record
        return record
    }
}

extension RecordTable {
    /// A completed download whose file has gone is asked for from nothing: no bytes, no resume
    /// state and, into a folder, no name (with the file gone the plain name is usually free once
    /// more: no " (2)" left over from a clash).
    /// - Returns: the name it let go.
    mutating func startOver(_ id: DownloadID) -> String? {
        update(id) { record -> String? in
            record.bytes = 0
            record.resume = nil
            if case .file = record.request.destination { return nil }
            defer { record.filePath = nil }
            return record.filePath
        } ?? nil
    }
}

/// Answers without a store (with one, the rows read, as they are in memory).
extension RecordTable {
    /// Every download, in enqueue order.
    var snapshots: [Download] { hot.values.sorted { $0.sequence < $1.sequence }.map { $0.snapshot() } }

    var counts: [DownloadStatus: Int] { hot.values.reduce(into: [:]) { $0[$1.status, default: 0] += 1 } }

    /// The downloads of each URL, in enqueue order.
    func downloads(of urls: [URL]) -> [[Download]] {
        urls.map { url in hot.values.filter { $0.request.url == url }.sorted { $0.sequence < $1.sequence }.map { $0.snapshot() } }
    }

    /// Downloads read from the store, the busy ones as they are in memory.
    func current(_ downloads: [Download]) -> [Download] {
        hot.isEmpty ? downloads : downloads.map { hot[$0.request.id]?.snapshot() ?? $0 }
    }

    func current(_ rows: [[DownloadRecord]]) -> [[Download]] {
        rows.map { $0.map { (hot[$0.request.id] ?? $0).snapshot() } }
    }
}

extension DownloadRecord {
    /// Nothing is happening to it but waiting for its turn (or for the user).
    var isAtRest: Bool { state.isAtRest }
}
