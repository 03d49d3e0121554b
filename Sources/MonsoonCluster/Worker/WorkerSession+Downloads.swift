import FoundationEssentials
import Glibc
import MonsoonEngine

extension WorkerSession {
    /// Hands a download job to the engine. Its part is named after the job and the lease's
    /// token, in the worker's work folder: two workers sharing a folder never write the same
    /// part, and a file is only ever published under its archive name by the holder of the lease.
    /// - Parameter resolved: where the job's first redirect leads, when a probe found it (the
    ///   download goes there directly: the redirector has counted its request already).
    func startDownload(_ job: ClaimedJob, from resolved: URL? = nil) async {
        await enqueue(downloadRequest(job, from: resolved).map { [(job, $0)] } ?? [])
    }

    /// `startDownload` for jobs just claimed, in one command to the engine: a claim of many small
    /// files costs one trip to the transfer thread, not one each.
    func startDownloads(_ jobs: [ClaimedJob]) async {
        await enqueue(jobs.compactMap { job in downloadRequest(job).map { (job, $0) } })
    }

    /// The engine's request for a job's download; nil (the job failed) when it has no file name or no valid URL.
    private func downloadRequest(_ job: ClaimedJob, from resolved: URL? = nil) -> DownloadRequest? {
        guard job.path != nil, let url = resolved ?? URL(string: job.url) else {
            database { _ = try $0.fail(job.lease, reason: "the job has no file name or no valid URL") }
            answered(job.lease)   // a turn it held on a host that spaces requests ends with it
            held[job.lease] = nil
            summary.failed += 1
            return nil
        }
        let id = DownloadID("j\(job.lease.job)-t\(job.lease.token)")
        // The extension is the server's answer's (its final URL's, else its media type's), as a
        // local archive names files; a part taken over from an earlier holder keeps the one it has.
        let destination: DownloadRequest.Destination
        if configuration.discard {
            destination = .discard(checksum: true)
        } else if let adopted = WorkFolder(path: workFolder, root: configuration.folder).adoptPart(of: job, as: id) {
            summary.adoptedBytes += Int64(adopted.bytes)
            destination = .file(adopted.destination)
        } else {
            destination = .named(folder: workFolder, stem: id.rawValue)
        }
        // The feed's --max-size, else twice the declared length and 64 MiB more, as `archive`
        // allows: a stream that never ends is stopped, an episode with ads inserted is not.
        let limit = job.maxBytes.map { DownloadRequest.SizeLimit(bytes: Int($0), reason: "the feed's --max-size") }
            ?? job.expectedLength.flatMap { $0 >= 1 << 20 ? DownloadRequest.SizeLimit(bytes: Int($0) * 2 + (64 << 20), reason: "twice the feed's declared length plus 64 MiB") : nil }
        // To a host that spaces its requests, one request per download: a redirect is not followed
        // at once, but asked again (a new claim, which looks where it leads first).
        let spaced = ClusterHost.key(of: url).map { held[job.lease]?.reserved.contains($0) ?? false } ?? false
        return DownloadRequest(id: id, url: url, destination: destination, expectedSize: job.expectedLength.map(Int.init),
                               sizeLimit: limit, root: configuration.folder, addresses: configuration.allowPrivate ? .any : feedHostScopes.scope(of: job), followsRedirects: !spaced,
                               owner: .job)
    }

    private func enqueue(_ requests: [(job: ClaimedJob, request: DownloadRequest)]) async {
        guard let (job, _) = requests.first else { return }
        do {
            try await manager.enqueue(contentsOf: requests.map(\.request), replacingExisting: true)
            storageFailures = 0
            for (job, request) in requests {
                held[job.lease]?.download = request.id
                leaseOfDownload[request.id] = job.lease
            }
        } catch where requests.count > 1 {
            // None went in (all or none): one at a time now, so that each job meets its own refusal.
            for request in requests { await enqueue([request]) }
        } catch where error.code == .storage || error.code == .storageFull {
            // This worker's engine cannot keep its queue in the database this moment (it is
            // restarting, say): the job is not at fault. It goes back, its attempt given back,
            // and this worker claims nothing for a while, longer each time it happens again.
            storageFailures += 1
            let pause = min(60, 1 << min(storageFailures, 6))
            report("could not queue \(job.lease) in its engine (\(error.message)); the job goes back to the queue, and this worker claims none for \(pause) s")
            database { _ = try $0.release([job.lease]) }
            answered(job.lease)   // a turn it held on a host that spaces requests ends with it
            held[job.lease] = nil
            claimsPausedUntil = .now + .seconds(pause)
        } catch {
            // Refused at once: a URL the engine does not fetch (not http or https).
            database { _ = try $0.fail(job.lease, reason: error.message) }
            answered(job.lease)   // a turn it held on a host that spaces requests ends with it
            held[job.lease] = nil
            summary.failed += 1
        }
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

    /// The engine is done with a download (which answers its request, if nothing did before): it
    /// is recorded with the others that finish meanwhile (``FinishedBatch``), in one round trip for all of them.
    func finished(_ download: Download) {
        guard let lease = leaseOfDownload[download.id], held[lease] != nil else { return }   // lost meanwhile: dropped already
        answered(lease)   // when nothing came before its end: a spaced host's turn ends with it
        held[lease]?.finished = download
        let finished = held.values.count { $0.finished != nil }
        let now = FinishedBatch.recordsNow(finished: finished, underWay: held.count - finished)
        guard now || !flushScheduled else { return }
        flushScheduled = flushScheduled || !now
        let (events, number) = (self.events, flushes)
        Task {
            if !now { try? await Task.sleep(for: FinishedBatch.deadline) }   // never cancelled: a flush before it makes it stale
            events.yield(.flush(number))
        }
    }

    /// Records every finished download (retried at each tick while the database is away).
    /// Failures one by one (they are few); completed ones in one transaction: each file takes its
    /// name only while its job is locked as this worker's (`JobQueue.completeHolding`), then the
    /// jobs are completed and their ledger rows written. A job lost meanwhile publishes nothing:
    /// its file stays in the work folder as a part, for whoever holds the job now to take over.
    func settleFinished() async {
        guard connected else { return }
        var entries: [LedgerEntry] = []
        for (lease, entry) in held {
            guard let download = entry.finished else { continue }
            if download.status == .failed || download.lastError?.code == .notEnoughDiskSpace {
                await settleFailure(lease, download)
            } else if let ledger = await ledgerEntry(lease, download) {
                entries.append(ledger)
            }
        }
        guard !entries.isEmpty else { return }
        var unplaced: [Lease: String] = [:]
        let discard = configuration.discard
        configuration.placing?(.beforeLocking)
        guard let outcome = database({ queue in
            // Nothing to place: the fenced completion alone, without locking the jobs first in a
            // transaction of its own (a statement and a round trip less per batch).
            if discard {
                let completed = try queue.complete(entries)
                return (held: completed, completed: completed)
            }
            return try queue.completeHolding(entries) { entry in
                configuration.placing?(.locked)
                do {
                    try publish(entry, on: queue)
                    return true
                } catch {
                    unplaced[entry.lease] = "\(error)"
                    return false
                }
            }
        }) else { return }   // the database is away: the files wait, and are placed once it is back
        for entry in entries {
            guard let job = held[entry.lease]?.job else { continue }
            if outcome.completed.contains(entry.lease) {
                summary.completed += 1
                summary.bytes += entry.size
                configuration.observe?(.completed(job: entry.lease.job, path: entry.path, bytes: entry.size))
                if let feed = job.feedID { dirtyFeeds.insert(feed) }
                learnAnsweredHost(job, finalURL: entry.finalURL)
            } else if outcome.held.contains(entry.lease) {
                // Held, but its file could not be put in place: the job waits to run again.
                let reason = unplaced[entry.lease] ?? "its file could not be put in place"
                database { _ = try $0.retryLater(entry.lease, after: 120, reason: reason) }
                if let work = held[entry.lease]?.finished?.filePath { unlink(work) }
                summary.failed += 1
            } else {
                summary.lost += 1
                keepAsPart(held[entry.lease]?.finished?.filePath)
                report("lost \(entry.lease) before recording it: its file was left for the worker that holds the job now")
            }
        }
        await forget(entries.map(\.lease), keepingPart: false)
    }

    /// A finished download's ledger row: its file's SHA-256, the engine's (hashed as it came) or else worked out once,
    /// before any lock is taken (hashing a large file takes a while). A file that cannot be read sends its job back.
    func ledgerEntry(_ lease: Lease, _ download: Download) async -> LedgerEntry? {
        guard let job = held[lease]?.job else { return nil }
        guard !configuration.discard else {
            return LedgerEntry(lease: lease, path: job.path ?? "", size: Int64(download.bytes), sha256: download.checksum ?? "",
                               finalURL: download.finalURL, etag: download.etag, lastModified: download.lastModified, node: configuration.node)
        }
        guard let work = download.filePath, let stem = job.path else { return nil }
        let sha256: String
        if let known = held[lease]?.sha256 ?? download.checksum {
            sha256 = known
        } else {
            do {
                sha256 = try FileDigest.sha256(ofFile: work)
            } catch {
                database { _ = try $0.retryLater(lease, after: 120, reason: "cannot read its downloaded file: \(error.message)") }
                unlink(work)
                summary.failed += 1
                await forget(lease)
                return nil
            }
            held[lease]?.sha256 = sha256
        }
        let ext = work.fileExtension
        return LedgerEntry(lease: lease, path: ext.isEmpty ? stem : stem + "." + ext, size: Int64(download.bytes), sha256: sha256,
                           finalURL: download.finalURL, etag: download.etag, lastModified: download.lastModified, node: configuration.node)
    }

    /// Puts a finished download's file under its archive name: called with its job locked as
    /// this worker's. A file there already that the ledger records for another job is never
    /// replaced.
    func publish(_ entry: LedgerEntry, on queue: JobQueue) throws {
        guard let work = held[entry.lease]?.finished?.filePath else { throw FilePublisher.Failure(description: "its downloaded file is gone") }
        var recordedElsewhere: PostgresError?
        _ = try FilePublisher.publish(work, to: entry.path, under: configuration.folder, sha256: entry.sha256) {
            do throws(PostgresError) {
                return try !queue.recordsAnother(entry.path, than: entry.lease)
            } catch {
                recordedElsewhere = error
                return false
            }
        }
        if let recordedElsewhere { throw recordedElsewhere }
    }

    /// A finished file whose job was lost: named as its part again, whole, so that the holder of
    /// the job now takes it over (`WorkFolder.adoptPart`) rather than download it all again.
    func keepAsPart(_ work: String?) {
        guard let work else { return }
        if rename(work, PartFile.path(for: work)) != 0 { unlink(work) }   // cannot be kept: it only takes room
    }

    /// A download the engine gave up on: failed for good, or back in the queue for later.
    func settleFailure(_ lease: Lease, _ download: Download) async {
        // A 429 holds the host for every worker, not only this job.
        if download.lastError?.httpStatus == 429, let host = ClusterHost.key(of: download.finalURL.flatMap(URL.init(string:)) ?? download.request.url) {
            database { try $0.hold(host: host, seconds: 60) }
        }
        let failure = JobFailure(download.lastError, attempt: held[lease]?.job.attempt ?? 1)
        let recorded: Bool? = switch failure {
        case .permanent(let reason): database { try $0.fail(lease, reason: reason) }
        case .transient(let reason, let seconds): database { try $0.retryLater(lease, after: seconds, reason: reason) }
        }
        guard let recorded else { return }   // the database is away: again at the next tick
        if !recorded { summary.lost += 1 } else { summary.failed += 1 }
        if recorded { configuration.observe?(.failed(job: lease.job, url: held[lease]?.job.url ?? "", reason: failure.reason, retrying: failure.retries)) }
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
        // Keyed by whether the file goes too (it does for an unfinished download).
        var removals: [Bool: [DownloadID]] = [:]
        for lease in leases {
            answered(lease)   // a turn it held on a host that spaces requests ends with it
            guard let entry = held.removeValue(forKey: lease) else { continue }
            entry.refresh?.cancel()
            guard let id = entry.download else { continue }
            leaseOfDownload[id] = nil
            // Paused: its part stays on disk for whoever claims the job next (its row stays in
            // this worker's engine queue, which its next start empties).
            if keepingPart && entry.finished == nil { pauses.append(id) } else { removals[entry.finished == nil, default: []].append(id) }
        }
        let manager = self.manager
        await withTaskGroup(of: Void.self) { group in
            // Either fails only when the download is done or gone already, the engine stopped, or
            // its database is away; the engine stops the transfer before it saves, so nothing runs
            // on in any case (its queue is in memory: no row outlives the worker).
            for id in pauses { group.addTask { try? await manager.pause(id) } }
            for (deleteFile, ids) in removals { group.addTask { _ = try? await manager.remove(contentsOf: ids, deleteFile: deleteFile) } }
        }
    }

    /// When a download's redirects ended at another host, the feed's other queued downloads of
    /// the same host will likely end there too: their claims count on that host from now on.
    func learnAnsweredHost(_ job: ClaimedJob, finalURL: String?) {
        guard let host = finalURL.flatMap(URL.init(string:)).flatMap(ClusterHost.key(of:)), host != job.host, host != job.answeredHost else { return }
        database { try $0.noteAnsweredHost(host, for: job) }
    }
}
