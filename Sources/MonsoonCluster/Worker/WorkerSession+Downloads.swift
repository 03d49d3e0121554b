import Foundation
import MonsoonEngine

extension WorkerSession {
    /// Hands a download job to the engine. Its part is named after the job and the lease's
    /// token, in the worker's work folder: two workers sharing a folder never write the same
    /// part, and a file is only ever published under its archive name by the holder of the lease.
    /// - Parameter resolved: where the job's first redirect leads, when a probe found it (the
    ///   download goes there directly: the redirector has counted its request already).
    func startDownload(_ job: ClaimedJob, from resolved: URL? = nil) async {
        guard job.path != nil, let url = resolved ?? URL(string: job.url) else {
            database { _ = try $0.fail(job.lease, reason: "the job has no file name or no valid URL") }
            held[job.lease] = nil
            summary.failed += 1
            return
        }
        let id = DownloadID("j\(job.lease.job)-t\(job.lease.token)")
        // The extension is the server's answer's (its final URL's, else its media type's), as a
        // local archive names files; a part taken over from an earlier holder keeps the one it has.
        let destination: DownloadRequest.Destination
        if configuration.discard {
            destination = .discard(checksum: true)
        } else if let adopted = adoptPart(of: job, as: id) {
            summary.adoptedBytes += Int64(adopted.bytes)
            destination = .file(adopted.destination)
        } else {
            destination = .named(folder: workFolder, stem: id.rawValue)
        }
        // The feed's --max-size, else twice the declared length and 64 MiB more, as `archive`
        // allows: a stream that never ends is stopped, an episode with ads inserted is not.
        let limit = job.maxBytes.map { DownloadRequest.SizeLimit(bytes: Int($0), reason: "the feed's --max-size") }
            ?? job.expectedLength.flatMap { $0 >= 1 << 20 ? DownloadRequest.SizeLimit(bytes: Int($0) * 2 + (64 << 20), reason: "twice the feed's declared length plus 64 MiB") : nil }
        let request = DownloadRequest(id: id, url: url, destination: destination, expectedSize: job.expectedLength.map(Int.init),
                                      sizeLimit: limit, root: configuration.folder, addresses: addressScope(of: job))
        do {
            try await manager.enqueue(request, replacingExisting: true)
            storageFailures = 0
            held[job.lease]?.download = id
            leaseOfDownload[id] = job.lease
        } catch where error.code == .storage || error.code == .storageFull {
            // This worker's engine cannot keep its queue in the database this moment (it is
            // restarting, say): the job is not at fault. It goes back, its attempt given back,
            // and this worker claims nothing for a while, longer each time it happens again.
            storageFailures += 1
            let pause = min(60, 1 << min(storageFailures, 6))
            report("could not queue \(job.lease) in its engine (\(error.message)); the job goes back to the queue, and this worker claims none for \(pause) s")
            database { _ = try $0.release([job.lease]) }
            held[job.lease] = nil
            claimsPausedUntil = .now + .seconds(pause)
        } catch {
            // Refused at once: a URL the engine does not fetch (not http or https).
            database { _ = try $0.fail(job.lease, reason: error.message) }
            held[job.lease] = nil
            summary.failed += 1
        }
    }

    /// The addresses a job's download may reach: any when allowed, or when its feed is on a
    /// private address itself; else public ones only (a feed's URL must not lead into the
    /// workers' own network). Each feed host is looked up once.
    func addressScope(of job: ClaimedJob) -> AddressScope {
        guard !configuration.allowPrivate else { return .any }
        let host = job.feedURL.flatMap(URL.init(string:))?.host ?? ""
        if let known = feedHostScopes[host] { return known }
        let scope: AddressScope = AddressScope.isPrivate(host: host) ? .any : .publicOnly
        feedHostScopes[host] = scope
        return scope
    }

    /// Takes over the largest part an earlier holder of the job left in the work folder (a worker
    /// killed, or one that lost its lease), so the engine resumes it instead of fetching those
    /// bytes again; the others go. Only this worker holds the job now: every other lease of it
    /// is over.
    func adoptPart(of job: ClaimedJob, as id: DownloadID) -> (destination: String, bytes: Int)? {
        let prefix = "j\(job.lease.job)-t"
        // No work folder listing: nothing to take over.
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: workFolder)) ?? [])
            .filter { $0.hasPrefix(prefix) && $0.hasSuffix(PartFile.suffix) && !$0.hasPrefix(id.rawValue + ".") }
        let sized = names.map { name -> (String, Int) in
            let size = (try? FileManager.default.attributesOfItem(atPath: workFolder + "/" + name)[.size] as? Int) ?? 0   // gone meanwhile: nothing
            return (name, size)
        }.sorted { $0.1 > $1.1 }
        defer { for (name, _) in sized.dropFirst() { unlink(workFolder + "/" + name) } }
        guard let largest = sized.first else { return nil }
        let old = String(largest.0.dropLast(PartFile.suffix.count))
        // What follows "j<job>-t<token>" in its name is the extension its holder's answer gave.
        let ext = old.drop { $0 != "." }
        let destination = workFolder + "/" + id.rawValue + ext
        let bytes = PartFile.adopt(from: workFolder + "/" + old, to: destination, root: configuration.folder)
        return bytes > 0 ? (destination, bytes) : nil
    }

    /// Removes from the work folder what belongs to jobs that are over (completed, failed, dead,
    /// or gone): parts left by killed workers, and names left by a crash between publishing a
    /// file and removing its work name. Parts of jobs that may run again stay, to be taken over.
    func sweepWorkFolder() {
        // No work folder listing: nothing to sweep.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: workFolder)) ?? []
        var byJob: [Int64: [String]] = [:]
        for name in names where name.hasPrefix("j") {
            guard let dash = name.firstIndex(of: "-"), let job = Int64(name[name.index(after: name.startIndex)..<dash]) else { continue }
            byJob[job, default: []].append(name)
        }
        guard !byJob.isEmpty, let live = database({ try $0.unfinishedJobs(among: Array(byJob.keys)) }) else { return }
        for (job, files) in byJob where !live.contains(job) {
            for name in files { unlink(workFolder + "/" + name) }
        }
    }

    /// The engine is done with a download: it is recorded with the others that finish meanwhile
    /// (within 20 ms), in one round trip for all of them.
    func finished(_ download: Download) {
        guard let lease = leaseOfDownload[download.id], held[lease] != nil else { return }   // lost meanwhile: dropped already
        held[lease]?.finished = download
        guard !flushScheduled else { return }
        flushScheduled = true
        let events = self.events
        Task {
            try? await Task.sleep(for: .milliseconds(20))   // never cancelled: the flush only comes sooner
            events.yield(.flush)
        }
    }

    /// Records every finished download (retried at each tick while the database is away).
    /// Failures one by one (they are few); completed ones in batches: one renewal fences them
    /// all before their files take their names (a worker whose lease was lost, paused or cut
    /// off, publishes nothing, and its file goes), then one statement completes them and
    /// writes their ledger rows.
    func settleFinished() async {
        guard connected else { return }
        var fence: [Lease] = []
        var records: [Lease] = []
        for (lease, entry) in held {
            guard let download = entry.finished else { continue }
            if entry.ledger != nil {
                records.append(lease)   // in place already: only its record is missing
            } else if download.status == .failed || download.lastError?.code == .notEnoughDiskSpace {
                await settleFailure(lease, download)
            } else if configuration.discard {
                held[lease]?.ledger = LedgerEntry(lease: lease, path: entry.job.path ?? "", size: Int64(download.bytes), sha256: download.checksum ?? "",
                                                  finalURL: download.finalURL, etag: download.etag, lastModified: download.lastModified, node: configuration.node)
                records.append(lease)
            } else {
                fence.append(lease)
            }
        }
        if !fence.isEmpty {
            guard let renewed = database({ try $0.renew(fence, bytes: summary.bytes, speed: nil) }) else { return }
            for lease in fence {
                if let ledger = publish(lease, renewed: renewed.contains(lease)) {
                    held[lease]?.ledger = ledger
                    records.append(lease)
                } else {
                    await forget(lease)
                }
            }
        }
        let entries = records.compactMap { held[$0]?.ledger }
        guard !entries.isEmpty, let completed = database({ try $0.complete(entries) }) else { return }
        for lease in records {
            guard let entry = held[lease], let ledger = entry.ledger else { continue }
            if completed.contains(lease) {
                summary.completed += 1
                summary.bytes += ledger.size
                if let feed = entry.job.feedID { dirtyFeeds.insert(feed) }
            } else {
                // Lost between the renewal and the commit: the file under its name holds the right
                // bytes; whoever runs the job next finds them there and records them.
                summary.lost += 1
            }
            learnAnsweredHost(entry.job, finalURL: ledger.finalURL)
            await forget(lease)
        }
    }

    /// Puts a finished download's file under its archive name, if its lease still holds.
    /// - Returns: its ledger row; nil when it was dropped (lease lost) or could not be put in
    ///   place (the job then waits to run again).
    func publish(_ lease: Lease, renewed: Bool) -> LedgerEntry? {
        guard let entry = held[lease], let download = entry.finished, let work = download.filePath, let stem = entry.job.path else { return nil }
        guard renewed else {
            unlink(work)
            summary.lost += 1
            report("lost \(lease) before recording it: its file was dropped (the job runs elsewhere)")
            return nil
        }
        let ext = (work as NSString).pathExtension
        let path = ext.isEmpty ? stem : stem + "." + ext
        do {
            let sha256 = try FileDigest.sha256(ofFile: work)
            _ = try FilePublisher.publish(work, to: path, under: configuration.folder, sha256: sha256)
            return LedgerEntry(lease: lease, path: path, size: Int64(download.bytes), sha256: sha256, finalURL: download.finalURL,
                               etag: download.etag, lastModified: download.lastModified, node: configuration.node)
        } catch {
            let reason = "\(error)"
            database { _ = try $0.retryLater(lease, after: 120, reason: reason) }
            unlink(work)
            summary.failed += 1
            return nil
        }
    }

    /// A download the engine gave up on: failed for good, or back in the queue for later.
    func settleFailure(_ lease: Lease, _ download: Download) async {
        // A 429 holds the host for every worker, not only this job.
        if download.lastError?.httpStatus == 429, let host = ClusterHost.key(of: download.finalURL.flatMap(URL.init(string:)) ?? download.request.url) {
            database { try $0.hold(host: host, seconds: 60) }
        }
        let recorded: Bool? = switch JobFailure(download.lastError) {
        case .permanent(let reason): database { try $0.fail(lease, reason: reason) }
        case .transient(let reason, let seconds): database { try $0.retryLater(lease, after: seconds, reason: reason) }
        }
        guard let recorded else { return }   // the database is away: again at the next tick
        if !recorded { summary.lost += 1 } else { summary.failed += 1 }
        await forget(lease)
    }

    /// Lets go of a job here: its refresh is cancelled, its download forgotten by the engine, or,
    /// when unfinished and `keepingPart`, stopped with its part kept for whoever claims it next.
    func forget(_ lease: Lease, keepingPart: Bool = false) async {
        await forget([lease], keepingPart: keepingPart)
    }

    /// `forget` for many jobs at once: every transfer is told to stop before any answer is
    /// awaited (an answer waits for the engine's saves, which wait for its database: at a
    /// fence, the database is away).
    func forget(_ leases: [Lease], keepingPart: Bool) async {
        var pauses: [DownloadID] = []
        var removals: [(DownloadID, deleteFile: Bool)] = []
        for lease in leases {
            guard let entry = held.removeValue(forKey: lease) else { continue }
            entry.refresh?.cancel()
            guard let id = entry.download else { continue }
            leaseOfDownload[id] = nil
            // Paused: its part stays on disk for whoever claims the job next (its row stays in
            // this worker's engine queue, which its next start empties).
            if keepingPart && entry.finished == nil { pauses.append(id) } else { removals.append((id, entry.finished == nil)) }
        }
        let manager = self.manager
        await withTaskGroup(of: Void.self) { group in
            // Either fails only when the download is done or gone already, the engine stopped, or
            // its database is away; the engine stops the transfer before it saves, so nothing runs
            // on in any case, and a row left behind goes when this worker's queue is next emptied.
            for id in pauses { group.addTask { try? await manager.pause(id) } }
            for (id, deleteFile) in removals { group.addTask { try? await manager.remove(id, deleteFile: deleteFile) } }
        }
    }

    /// When a download's redirects ended at another host, the feed's other queued downloads of
    /// the same host will likely end there too: their claims count on that host from now on.
    func learnAnsweredHost(_ job: ClaimedJob, finalURL: String?) {
        guard let host = finalURL.flatMap(URL.init(string:)).flatMap(ClusterHost.key(of:)), host != job.host, host != job.answeredHost else { return }
        database { try $0.noteAnsweredHost(host, for: job) }
    }
}
