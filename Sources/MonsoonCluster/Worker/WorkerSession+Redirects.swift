import Foundation
import MonsoonEngine

/// Each host's limit holds where a download's redirects lead too (tracking redirectors in front
/// of a CDN), and before the download connects there: the worker asks the job's URL with a HEAD
/// that follows no redirect, takes a connection on the host the answer points to, under that
/// host's row lock (`JobQueue.acquire`), asks there the same way, and so on along the chain (5
/// hops at most, the engine following any rest), then downloads from where the chain ended. Only
/// for hosts known to redirect, or not known yet: a host whose downloads were answered directly
/// is asked nothing more.
extension WorkerSession {
    /// Asks `url` (the job's own, first) where a download would go.
    func startProbe(_ job: ClaimedJob, at url: URL? = nil) {
        let events = self.events
        guard let url = url ?? URL(string: job.url) else {
            // No URL to ask: the download's start says so, and fails the job.
            events.yield(.probed(job.lease, .failure(DownloadError(.unsupportedScheme, "\(job.url) is not a URL"))))
            return
        }
        held[job.lease]?.probe = url
        let manager = self.manager
        var request = FetchRequest(url: url, maxBytes: 64 << 10, timeout: 30)
        request.followsRedirects = false
        request.headOnly = true
        Task {
            do throws(DownloadError) {
                events.yield(.probed(job.lease, .success(try await manager.fetch(request))))
            } catch {
                events.yield(.probed(job.lease, .failure(error)))
            }
        }
    }

    /// Follows the answer one hop: a connection taken on a new host first, then the next
    /// question; the download starts where the chain ends. A host with no room sends the job
    /// back to the queue counting on it, and a claim takes it when that host has room.
    func probed(_ lease: Lease, _ result: Result<FetchResponse, DownloadError>) async {
        guard let entry = held[lease], let asked = entry.probe else { return }   // lost meanwhile
        let job = entry.job
        guard case .success(let response) = result, (300...399).contains(response.status),
              let location = response.header("Location"), let target = URL(string: location, relativeTo: asked)?.absoluteURL,
              let host = ClusterHost.key(of: target) else {
            // Answered there (or not at all: the download then meets the same failure and its
            // retries). The job's own host is known not to redirect when it answered itself.
            if entry.hops == 0, case .success(let response) = result, !(300...399).contains(response.status) {
                database { try $0.noteRedirects(of: job.host, false) }
            }
            return await startDownload(job, from: entry.hops == 0 ? nil : asked)
        }
        if entry.hops == 0 { database { try $0.noteRedirects(of: job.host, true) } }
        if host != job.host && host != job.answeredHost {
            guard let granted = database({ try $0.acquire(answeredHost: host, for: lease) }) else { return }   // the database is away: the lease decides
            guard granted else {
                // No room there now: recorded on the job (and the feed's queued ones), then back to the queue.
                database { try $0.setAnsweredHost(host, for: lease) }
                database { try $0.noteAnsweredHost(host, for: job) }
                database { _ = try $0.retryLater(lease, after: 1, reason: "\(host), where its redirects lead, had no free connection") }
                return await forget(lease)
            }
            held[lease]?.job.answeredHost = host
        }
        guard entry.hops < 4 else { return await startDownload(job, from: target) }   // the engine follows the rest
        held[lease]?.hops += 1
        startProbe(held[lease]?.job ?? job, at: target)
    }
}
