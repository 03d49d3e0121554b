import FoundationEssentials
import MonsoonEngine

/// Each host's limit holds where a download's redirects lead too (tracking redirectors in front
/// of a CDN), and before the download connects there: the worker asks the job's URL with a HEAD
/// that follows no redirect, takes a connection on the host the answer points to, under that
/// host's row lock (`JobQueue.acquire`), asks there the same way, and so on along the chain (5
/// hops at most, the engine following any rest), then downloads from where the chain ended. Only
/// for hosts known to redirect, or not known yet: a host whose downloads were answered directly
/// is asked nothing more.
extension WorkerSession {
    /// Asks `url` where a download would go.
    func startProbe(_ job: ClaimedJob, at url: URL) {
        let events = self.events
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
        if let host = ClusterHost.key(of: asked) { answered(lease, on: [host]) }
        guard case .success(let response) = result, (300...399).contains(response.status),
              let location = response.header("Location"), let target = URL(string: location, relativeTo: asked)?.absoluteURL,
              let host = ClusterHost.key(of: target) else {
            // Answered there (or not at all: the download then meets the same failure and its
            // retries). The job's own host is known not to redirect when it answered itself.
            if entry.hops == 0, case .success(let response) = result, !(300...399).contains(response.status) {
                database { try $0.noteRedirects(of: job.host, false) }
            }
            return await request(lease, .download(entry.hops == 0 ? nil : asked))
        }
        if entry.hops == 0 { database { try $0.noteRedirects(of: job.host, true) } }
        if host != job.host && host != job.answeredHost {
            guard let acquired = database({ try $0.acquire(answeredHost: host, for: lease) }) else { return }   // the database is away: the lease decides
            guard acquired != .noRoom else {
                // No room there now: recorded on the job (and the feed's queued ones), then back to the queue.
                database { try $0.setAnsweredHost(host, for: lease) }
                database { try $0.noteAnsweredHost(host, for: job) }
                database { _ = try $0.retryLater(lease, after: 1, reason: "\(host), where its redirects lead, had no free connection", attempted: false) }
                return await forget(lease)
            }
            held[lease]?.job.answeredHost = host
            if acquired == .reserved { held[lease]?.reserved.insert(host) } else { held[lease]?.unspaced.insert(host) }
        }
        guard entry.hops < 4 else { return await request(lease, .download(target)) }   // the engine follows the rest
        held[lease]?.hops += 1
        await request(lease, .probe(target))
    }

    /// A job's next request: where it asks where its download goes, or its download (from where
    /// its redirects lead, when a probe found it; nil: its own URL).
    enum NextRequest {
        case probe(URL)
        case download(URL?)
    }

    /// Sends a job's next request once its host allows: at once when the host spaces no requests
    /// (as its claim found, or as the database says) or the job holds the host's reservation (its
    /// claim's, for its first request there), else once the host grants one
    /// (`JobQueue.reserveRequest`), asked again when its interval says. So every request to a host
    /// that spaces them, probes and retries included, from any worker, comes at least its interval
    /// after the last one was answered.
    func request(_ lease: Lease, _ next: NextRequest) async {
        guard let entry = held[lease] else { return }
        held[lease]?.waiting = nil
        let url: URL? = switch next {
        case .probe(let url): url
        case .download(let url): url ?? URL(string: entry.job.url)
        }
        if let host = url.flatMap(ClusterHost.key(of:)), !entry.asksNoTurn(on: host) {
            switch database({ try $0.reserveRequest(on: host, for: lease) }) {
            case .notSpaced?:
                held[lease]?.unspaced.insert(host)
            case .reserved?:
                held[lease]?.reserved.insert(host)
            case .wait(let seconds)?:
                return wait(lease, next, seconds: seconds)
            case nil:
                return wait(lease, next, seconds: 1)   // the database is away: again in a moment, while the lease lasts
            }
        }
        switch next {
        case .probe(let url): startProbe(entry.job, at: url)
        case .download(let url): await startDownload(entry.job, from: url)
        }
    }

    private func wait(_ lease: Lease, _ next: NextRequest, seconds: Double) {
        held[lease]?.waiting = next
        let events = self.events
        Task {
            try? await Task.sleep(for: .milliseconds(max(1, Int((seconds * 1000).rounded(.up)))))   // never cancelled
            events.yield(.requestDue(lease))
        }
    }

    /// The job's requests to `hosts` (all it holds, by default) were answered, or will not be
    /// made: each host's interval counts from now.
    func answered(_ lease: Lease, on hosts: Set<String>? = nil) {
        guard let reserved = held[lease]?.reserved else { return }
        let done = hosts.map { $0.intersection(reserved) } ?? reserved
        guard !done.isEmpty else { return }
        held[lease]?.reserved.subtract(done)
        guard let interval = database({ try $0.requestAnswered(on: done, by: lease) }), interval > 0 else { return }
        // The host's next turn comes after its interval: a claim looks for it then, not at the next poll.
        let events = self.events
        Task {
            try? await Task.sleep(for: .milliseconds(Int((interval * 1000).rounded(.up)) + 5))   // never cancelled
            events.yield(.wake)
        }
    }
}
