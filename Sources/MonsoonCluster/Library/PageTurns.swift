import FoundationEssentials
import MonsoonPodcasts

/// The turns a feed's refresh takes on the hosts of its later pages, when a host spaces its
/// requests (`JobQueue.reserveRequest`): each page waits until its host's interval has passed
/// since the request before it was answered, whichever worker asked.
///
/// The refresh's first request went under its claim's reservation; each turn ends the one before.
final class PageTurns {
    private let queue: JobQueue
    private let lease: Lease
    /// The host whose reservation the refresh holds (its claim's, then a page's).
    private var held: String?

    init(queue: JobQueue, job: ClaimedJob) {
        self.queue = queue
        lease = job.lease
        held = job.reserved.contains(job.host) ? job.host : nil
    }

    /// Waits for the turn of `page`'s host: the request before it (the feed's, or a page's) was
    /// answered by now.
    func wait(for page: URL) async throws(FeedError) {
        do {
            try finish()
            guard let host = ClusterHost.key(of: page) else { return }
            while true {
                switch try queue.reserveRequest(on: host, for: lease) {
                case .notSpaced:
                    return
                case .reserved:
                    held = host
                    return
                case .wait(let seconds):
                    try await Task.sleep(for: .milliseconds(max(1, Int((seconds * 1000).rounded(.up)))))
                }
            }
        } catch let error as PostgresError {
            throw FeedError(.network, "cannot take the turn of the host of \(Redaction.redact(page)) for its next page: \(error.message)")
        } catch {
            throw FeedError(.network, "the refresh was cancelled before \(Redaction.redact(page))")
        }
    }

    /// The last request was answered: its host's interval counts from now.
    func finish() throws(PostgresError) {
        guard let host = held else { return }
        held = nil
        try queue.requestAnswered(on: [host], by: lease)
    }
}
