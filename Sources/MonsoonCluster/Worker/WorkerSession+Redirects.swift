import Foundation
import MonsoonEngine

/// Each host's limit holds where a download's redirects lead too (a tracking redirector in
/// front of a CDN), and before the download connects there: the worker first asks the job's URL
/// with a HEAD that follows no redirect, then takes a connection on the host the answer points
/// to, under that host's row lock (`JobQueue.acquire`). Only for hosts known to redirect, or
/// not known yet: a host whose downloads were answered directly is asked nothing more.
extension WorkerSession {
    func startProbe(_ job: ClaimedJob) {
        let events = self.events
        guard let url = URL(string: job.url) else {
            // No URL to ask: the download's start says so, and fails the job.
            events.yield(.probed(job.lease, .failure(DownloadError(.unsupportedScheme, "\(job.url) is not a URL"))))
            return
        }
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

    /// Starts the download where the probe says, once that host has room; else the job goes
    /// back to the queue with the host it leads to, and a claim takes it when that host has room.
    func probed(_ lease: Lease, _ result: Result<FetchResponse, DownloadError>) async {
        guard let job = held[lease]?.job else { return }   // lost meanwhile
        guard case .success(let response) = result, (300...399).contains(response.status),
              let location = response.header("Location"), let target = URL(string: location, relativeTo: URL(string: job.url))?.absoluteURL,
              let host = ClusterHost.key(of: target), host != job.host else {
            // Answered directly (or not at all: the download then meets the same failure and
            // its retries): the host is known not to redirect when it answered.
            if case .success(let response) = result, !(300...399).contains(response.status) { database { try $0.noteRedirects(of: job.host, false) } }
            return await startDownload(job)
        }
        database { try $0.noteRedirects(of: job.host, true) }
        guard let granted = database({ try $0.acquire(answeredHost: host, for: lease) }) else { return }   // the database is away: the lease decides
        if granted {
            held[lease]?.job.answeredHost = host
            return await startDownload(job, from: target)
        }
        // No room there now: recorded on the job (and the feed's queued ones), then back to the queue.
        database { try $0.setAnsweredHost(host, for: lease) }
        database { try $0.noteAnsweredHost(host, for: job) }
        database { _ = try $0.retryLater(lease, after: 1, reason: "\(host), where its redirects lead, had no free connection") }
        await forget(lease)
    }
}
