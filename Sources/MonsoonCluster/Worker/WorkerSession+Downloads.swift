import Foundation
import MonsoonEngine

extension WorkerSession {
    /// Hands a download job to the engine. Its part is named after the job and the lease's
    /// token, in the worker's work folder: two workers sharing a folder never write the same
    /// part, and a file is only ever published under its archive name by the holder of the lease.
    func startDownload(_ job: ClaimedJob) async {
        guard let path = job.path, let url = URL(string: job.url) else {
            database { _ = try $0.fail(job.lease, reason: "the job has no file name or no valid URL") }
            held[job.lease] = nil
            summary.failed += 1
            return
        }
        let ext = (path as NSString).pathExtension
        let id = DownloadID("j\(job.lease.job)-t\(job.lease.token)")
        let work = workFolder + "/" + id.rawValue + (ext.isEmpty ? "" : "." + ext)
        // Twice the declared length and 64 MiB more, as `archive` allows: a stream that never
        // ends is stopped, an episode with ads inserted is not.
        let limit = job.expectedLength.flatMap { $0 >= 1 << 20 ? DownloadRequest.SizeLimit(bytes: Int($0) * 2 + (64 << 20), reason: "twice the feed's declared length plus 64 MiB") : nil }
        let request = DownloadRequest(id: id, url: url, destination: .file(work), expectedSize: job.expectedLength.map(Int.init),
                                      sizeLimit: limit, root: configuration.folder)
        summary.adoptedBytes += Int64(adoptPart(of: job, as: work))
        do {
            try await manager.enqueue(request, replacingExisting: true)
            held[job.lease]?.download = id
            leaseOfDownload[id] = job.lease
        } catch {
            // Refused at once: a URL the engine does not fetch (not http or https).
            database { _ = try $0.fail(job.lease, reason: error.message) }
            held[job.lease] = nil
            summary.failed += 1
        }
    }

    /// Takes over the largest part an earlier holder of the job left in the work folder (a worker
    /// killed, or one that lost its lease), so the engine resumes it instead of fetching those
    /// bytes again; the others go. Only this worker holds the job now: every other lease of it
    /// is over.
    func adoptPart(of job: ClaimedJob, as work: String) -> Int {
        let prefix = "j\(job.lease.job)-t"
        let ours = (work as NSString).lastPathComponent + PartFile.suffix
        // No work folder listing: nothing to take over.
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: workFolder)) ?? [])
            .filter { $0.hasPrefix(prefix) && $0.hasSuffix(PartFile.suffix) && $0 != ours }
        let sized = names.map { name -> (String, Int) in
            let size = (try? FileManager.default.attributesOfItem(atPath: workFolder + "/" + name)[.size] as? Int) ?? 0   // gone meanwhile: nothing
            return (name, size)
        }.sorted { $0.1 > $1.1 }
        guard let largest = sized.first else { return 0 }
        let adopted = PartFile.adopt(from: workFolder + "/" + String(largest.0.dropLast(PartFile.suffix.count)), to: work, root: configuration.folder)
        for (name, _) in sized.dropFirst() { unlink(workFolder + "/" + name) }
        return adopted
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

    /// The engine is done with a download: publish and record it, or report its failure.
    func finished(_ download: Download) async {
        guard let lease = leaseOfDownload[download.id], held[lease] != nil else { return }   // lost meanwhile: dropped already
        held[lease]?.finished = download
        await settle(lease)
    }

    /// Records a finished download in the database (retried at each tick while it cannot be).
    func settle(_ lease: Lease) async {
        guard let entry = held[lease], let download = entry.finished, connected else { return }
        if download.status == .failed {
            let recorded: Bool? = switch JobFailure(download.lastError) {
            case .permanent(let reason): database { try $0.fail(lease, reason: reason) }
            case .transient(let reason, let seconds): database { try $0.retryLater(lease, after: seconds, reason: reason) }
            }
            guard let recorded else { return }   // the database is away: again at the next tick
            if !recorded { summary.lost += 1 } else { summary.failed += 1 }
            await forget(lease)
            return
        }
        guard let work = download.filePath, let path = entry.job.path else { return await forget(lease) }
        // Fenced before the file takes its name: a worker whose lease was lost (it was paused,
        // cut off) publishes nothing, and its file goes.
        guard let renewed = database({ try $0.renew([lease], bytes: summary.bytes) }) else { return }
        guard renewed.contains(lease) else {
            unlink(work)
            summary.lost += 1
            report("lost \(lease) before recording it: its file was dropped (the job runs elsewhere)")
            return await forget(lease)
        }
        let size = Int64(download.bytes)
        do {
            let sha256 = try FileDigest.sha256(ofFile: work)
            _ = try FilePublisher.publish(work, to: path, under: configuration.folder, sha256: sha256)
            let ledger = LedgerEntry(lease: lease, path: path, size: size, sha256: sha256, finalURL: download.finalURL,
                                     etag: download.etag, lastModified: download.lastModified, node: configuration.node)
            guard let completed = database({ try $0.complete([ledger]) }) else { return }
            if completed.contains(lease) {
                summary.completed += 1
                summary.bytes += size
                if let feed = entry.job.feedID { dirtyFeeds.insert(feed) }
            } else {
                // Lost between the renewal and the commit: the file under its name holds the right
                // bytes; whoever runs the job next finds them there and records them.
                summary.lost += 1
            }
            learnAnsweredHost(entry.job, finalURL: download.finalURL)
        } catch {
            let reason = "\(error)"
            database { _ = try $0.retryLater(lease, after: 120, reason: reason) }
            unlink(work)
            summary.failed += 1
        }
        await forget(lease)
    }

    /// Lets go of a job here: its record in the engine, and the lease in memory.
    func forget(_ lease: Lease) async {
        guard let entry = held.removeValue(forKey: lease) else { return }
        if let id = entry.download {
            leaseOfDownload[id] = nil
            // Gone already (removed at a fence) is fine: nothing is left to forget.
            try? await manager.remove(id, deleteFile: entry.finished == nil)
        }
    }

    /// When a download's redirects ended at another host, the feed's other queued downloads of
    /// the same host will likely end there too: their claims count on that host from now on.
    func learnAnsweredHost(_ job: ClaimedJob, finalURL: String?) {
        guard let host = finalURL.flatMap(URL.init(string:)).flatMap(ClusterHost.key(of:)), host != job.host, host != job.answeredHost else { return }
        database { try $0.noteAnsweredHost(host, for: job) }
    }
}
