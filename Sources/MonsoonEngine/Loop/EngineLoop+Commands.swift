import Foundation
import MonsoonStore

/// The manager's commands, performed on the transfer thread.
extension EngineLoop {
    func enqueue(_ requests: [DownloadRequest], replacing: Bool) -> Result<[DownloadID], DownloadManagerError> {
        guard !stopping else { return .failure(.shutDown) }
        // Check everything first, so a batch is taken whole or not at all.
        var seen = Set<DownloadID>()
        var paths: [String: DownloadID] = [:]
        for request in requests {
            if !request.id.rawValue.isEmpty {
                if !replacing && (records[request.id] != nil || seen.contains(request.id)) { return .failure(.duplicate(request.id)) }
                seen.insert(request.id)
            }
            if case .discard = request.destination, store != nil {
                return .failure(.invalidRequest(request.id, "a download that writes nothing is not kept in a queue: use a manager without a database"))
            }
            let scheme = request.url.scheme?.lowercased()
            guard scheme == "http" || scheme == "https", request.url.host != nil else {
                return .failure(.invalidRequest(request.id, "only http and https URLs can be downloaded (\(request.url.absoluteString))"))
            }
            // Two downloads must never share a part file: one would truncate the other's bytes.
            if case .file(let path) = request.destination {
                if let other = paths[path] ?? pathOwner(path), other != request.id {
                    return .failure(.invalidRequest(request.id, "download \(other) already writes to \(path)"))
                }
                paths[path] = request.id
            }
        }
        var ids: [DownloadID] = []
        guard let store else {
            for request in requests {
                if !request.id.rawValue.isEmpty, records[request.id]?.placing == true {
                    records[request.id]?.pendingReplacement = request
                    ids.append(request.id)
                    continue
                }
                if !request.id.rawValue.isEmpty, records[request.id] != nil { stopAndForget(request.id, deleteFiles: false) }
                ids.append(insertRecord(request))
            }
            needsScheduling = true
            return .success(ids)
        }
        // One transaction for the whole batch: a hundred thousand rows in one commit. The
        // queue index learns of the rows only once they are committed.
        var staged: [DownloadRecord] = []
        do {
            try store.transaction {
                // What other processes added comes first, so numbering never collides.
                try self.adoptNewRows(in: store)
                self.nextSequence = max(self.nextSequence, try store.nextSequence())
                for request in requests {
                    if !request.id.rawValue.isEmpty, self.records.hot[request.id]?.placing == true {
                        // The old file is being renamed into place: replace it once that lands.
                        self.records[request.id]?.pendingReplacement = request
                        ids.append(request.id)
                        continue
                    }
                    if !request.id.rawValue.isEmpty, self.records[request.id] != nil { self.stopAndForget(request.id, deleteFiles: false) }
                    let automatic = request.id.rawValue.isEmpty
                    var record = Record(request: request, sequence: self.nextSequence, host: Self.hostKey(request.url))
                    if case .file(let path) = request.destination {
                        record.filePath = path
                        if let size = PartFile.size(at: PartFile.path(for: path)) { record.bytes = size }
                    }
                    while true {
                        record.sequence = self.nextSequence
                        if automatic { record.request.id = DownloadID("d\(record.sequence)") }
                        self.nextSequence += 1
                        do {
                            _ = try store.insert(record)
                            break
                        } catch let error as StoreError where automatic && error.isConstraintViolation {
                            // `d<N>` already taken by an explicit id: take the next number.
                            continue
                        }
                    }
                    staged.append(record)
                    ids.append(record.request.id)
                }
            }
        } catch {
            storeError = error
            return .failure(.storage("could not save the downloads: \(error)"))
        }
        // The write lock was held from the adoption above to the last insert: no other
        // process added rows in between, so everything up to here is known.
        if let last = staged.last { adoptedThrough = max(adoptedThrough, last.sequence) }
        let listening = hub.hasSubscribers
        for record in staged {
            claimed?[record.request.id, default: []].insert(Self.ownClaim)
            queue.insert(record.request.id, key: record.queueKey, host: hosts.id(record.host))
            if listening { emit(.added(record.snapshot())) }
        }
        needsScheduling = true
        return .success(ids)
    }

    /// Adds one download to a queue kept in memory; a request with an empty id gets `d<sequence>`.
    @discardableResult
    func insertRecord(_ request: DownloadRequest) -> DownloadID {
        var request = request
        if request.id.rawValue.isEmpty {
            while records[DownloadID("d\(nextSequence)")] != nil { nextSequence += 1 }
            request.id = DownloadID("d\(nextSequence)")
        }
        var record = Record(request: request, sequence: nextSequence, host: Self.hostKey(request.url))
        nextSequence += 1
        if case .file(let path) = request.destination {
            record.filePath = path
            if let size = PartFile.size(at: PartFile.path(for: path)) { record.bytes = size }
            worker.claimedPaths.withLock { $0[path] = request.id }
        }
        records[request.id] = record
        claimed?[request.id, default: []].insert(Self.ownClaim)
        queue.insert(request.id, key: record.queueKey, host: hosts.id(record.host))
        needsScheduling = true
        if hub.hasSubscribers { emit(.added(record.snapshot())) }
        return request.id
    }

    /// The unfinished download that holds `path`, if any (a completed one gives it up).
    func pathOwner(_ path: String) -> DownloadID? {
        if let store { return (try? store.owner(ofPath: path)) ?? nil }
        // A completed download gives its name up (`placementFinished`).
        return worker.claimedPaths.withLock { $0[path] }
    }

    /// Gives up a name a download held (without a store; with one, its row holds it).
    func releasePath(_ path: String, of id: DownloadID) {
        worker.claimedPaths.withLock { if $0[path] == id { $0[path] = nil } }
    }

    func pause(_ id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        guard record.status.isActive, !record.placing else { return .success(()) }
        stopTransfer(id)
        setStatus(id, .paused)
        return .success(())
    }

    func resume(_ id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        if record.status == .paused || record.status == .failed {
            records[id]?.counters = RetryPolicy.Counters()
            records[id]?.restarts = 0
            setStatus(id, .queued)
        }
        return .success(())
    }

    /// Retry a failed download, or one waiting to retry, now.
    func retry(_ id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        switch record.status {
        case .failed, .waitingToRetry, .paused:
            records[id]?.counters = RetryPolicy.Counters()
            records[id]?.restarts = 0
            hostsOnHold[hosts.id(record.host)] = nil
            setStatus(id, .queued)
        case .completed:
            // A completed download whose file has gone is fetched again.
            if let path = record.filePath, !PartFile.exists(path) {
                records[id]?.bytes = 0
                records[id]?.resume = nil
                // Into a folder, the name is chosen again: with the file gone, the plain
                // name is usually free once more (no " (2)" left over from a clash).
                if case .file = record.request.destination {} else {
                    records[id]?.filePath = nil
                    releasePath(path, of: id)
                }
                setStatus(id, .queued)
            }
        case .queued, .downloading:
            break
        }
        return .success(())
    }

    /// Lets a `.claimedOnly` engine start these downloads for `claimant` (a no-op for
    /// `.wholeQueue`): queued ones join the queue, those waiting to retry keep their time.
    func claim(_ ids: [DownloadID], by claimant: Int32 = ownClaim) -> Result<Void, DownloadManagerError> {
        guard claimed != nil else { return .success(()) }
        for id in ids {
            guard let record = records[id] else { continue }
            let wasClaimed = claimed?[id] != nil
            claimed?[id, default: []].insert(claimant)
            guard !wasClaimed else { continue }
            switch record.status {
            case .queued:
                queue.insert(id, key: record.queueKey, host: hosts.id(record.host))
                needsScheduling = true
            case .waitingToRetry:
                records[id] = record   // kept in memory: the waiting set reads its retry time
                waiting.insert(id)
            case .downloading, .paused, .completed, .failed:
                break
            }
        }
        return .success(())
    }

    /// `claimant` no longer wants the download (a no-op for `.wholeQueue`). When nobody
    /// does any more, a running transfer stops, keeping its part, and the download stays
    /// queued for a later run.
    func release(_ id: DownloadID, by claimant: Int32) {
        guard var claimants = claimed?[id], claimants.remove(claimant) != nil else { return }
        guard claimants.isEmpty else {
            claimed?[id] = claimants
            return
        }
        guard let record = records[id], !record.placing else { return }   // a file being placed lands
        claimed?[id] = nil
        switch record.status {
        case .downloading:
            stopTransfer(id)
            setStatus(id, .queued)
        case .queued:
            queue.remove(key: record.queueKey)
        case .waitingToRetry:
            waiting.remove(id)
        case .paused, .completed, .failed:
            break
        }
    }

    func pauseAll() -> Result<Void, DownloadManagerError> {
        var active = Set(queue.entries.map(\.id)).union(waiting)
        active.formUnion(records.hot.values.filter { $0.status == .downloading }.map(\.request.id))
        let pauseEverything = { for id in active { _ = self.pause(id) } }
        guard let store else {
            pauseEverything()
            return .success(())
        }
        do {
            // With `.claimedOnly`, the rest of the queue is only in the store: paused all the same.
            if claimed != nil {
                for status in [DownloadStatus.queued, .waitingToRetry, .downloading] { active.formUnion(try store.ids(withStatus: status)) }
            }
            pauseEverything()
            return .success(())
        } catch {
            storeError = error
            return .failure(.storage("could not pause every download: \(error)"))
        }
    }

    func resumeAll() -> Result<Void, DownloadManagerError> {
        var paused = Set(records.hot.values.filter { $0.status == .paused }.map(\.request.id))
        let resumeEverything = { for id in paused { _ = self.resume(id) } }
        guard let store else {
            resumeEverything()
            return .success(())
        }
        do {
            paused.formUnion(try store.ids(withStatus: .paused))
            resumeEverything()
            return .success(())
        } catch {
            storeError = error
            return .failure(.storage("could not resume every paused download: \(error)"))
        }
    }

    func setPriority(_ priority: Int, for id: DownloadID) -> Result<Void, DownloadManagerError> {
        guard var record = records[id] else { return .failure(.notFound(id)) }
        let wasQueued = record.status == .queued && runs(id)
        if wasQueued { queue.remove(key: record.queueKey) }
        record.request.priority = priority
        records[id] = record
        if wasQueued {
            queue.insert(id, key: record.queueKey, host: hosts.id(record.host))
            needsScheduling = true
        }
        persist(id)
        return .success(())
    }

    func setLimits(maxConcurrent: Int?, perHost: Int??) {
        if let maxConcurrent { configuration.maxConcurrentDownloads = max(0, maxConcurrent) }
        if let perHost { configuration.maxDownloadsPerHost = perHost.map { max(1, $0) } }
        needsScheduling = true
    }

    func remove(_ id: DownloadID, deleteFile: Bool) -> Result<Void, DownloadManagerError> {
        guard let record = records[id] else { return .failure(.notFound(id)) }
        if record.placing {
            // The rename is under way off this thread; finish the removal when it lands.
            records[id]?.pendingRemoval = deleteFile
            return .success(())
        }
        stopAndForget(id, deleteFiles: deleteFile)
        return .success(())
    }

    /// Stops any transfer, deletes the part (and the finished file if asked), forgets the record.
    func stopAndForget(_ id: DownloadID, deleteFiles: Bool) {
        guard let record = records[id] else { return }
        stopTransfer(id)
        releaseStartingSlot(id)
        if record.status == .queued { queue.remove(key: record.queueKey) }
        waiting.remove(id)
        if let path = record.filePath {
            PartFile.remove(PartFile.path(for: path))
            if deleteFiles && record.status == .completed { PartFile.remove(path) }
            releasePath(path, of: id)
        }
        records[id] = nil
        claimed?[id] = nil
        lastSaved[id] = nil
        if let store { note { try store.delete(id) } }
        emit(.removed(id))
    }

    func snapshot(of id: DownloadID) -> Result<Download?, DownloadManagerError> {
        if let record = records.hot[id] { return .success(record.snapshot()) }
        guard let store else { return .success(nil) }
        do {
            return .success(try store.record(withID: id)?.snapshot())
        } catch {
            return .failure(.storage("could not read download \(id): \(error)"))
        }
    }

    func downloads(of urls: [URL]) -> Result<[[Download]], DownloadManagerError> {
        guard let store else {
            return .success(urls.map { url in
                records.hot.values.filter { $0.request.url == url }.sorted { $0.sequence < $1.sequence }.map { $0.snapshot() }
            })
        }
        do {
            return .success(try urls.map { url in
                try store.rows(where: "url = ?", [url.absoluteString]).map { (records.hot[$0.request.id] ?? $0).snapshot() }
            })
        } catch {
            storeError = error
            return .failure(.storage("could not read the queue: \(error)"))
        }
    }

    func counts() -> [DownloadStatus: Int] {
        guard let store else {
            var counts: [DownloadStatus: Int] = [:]
            for record in records.hot.values { counts[record.status, default: 0] += 1 }
            return counts
        }
        var counts: [DownloadStatus: Int] = [:]
        note { counts = try store.counts() }
        return counts
    }

    func snapshots() -> [Download] {
        guard let store else {
            return records.hot.values.sorted { $0.sequence < $1.sequence }.map { $0.snapshot() }
        }
        // The store has every download; the busy ones are fresher in memory.
        var downloads: [Download] = []
        note {
            try store.forEachRecord(where: "1") { stored in
                downloads.append((records.hot[stored.request.id] ?? stored).snapshot())
            }
        }
        return downloads
    }

    static func hostKey(_ url: URL) -> String {
        let host = url.host?.lowercased() ?? ""
        if let port = url.port { return "\(host):\(port)" }
        return host
    }
}
