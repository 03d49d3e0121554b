import FoundationEssentials

/// The shared queue's jobs, as one worker sees them: it claims jobs under a lease, renews the
/// leases while it works, and reports each outcome. Every write that follows a claim names the
/// job *and* the lease's fencing token, so a worker that lost its lease (paused, cut off, too
/// slow to renew) changes nothing: the job is someone else's by then.
///
/// Only the database's clock counts (`now()` in every statement): the workers' clocks may
/// disagree with each other and with it.
///
/// - Important: like its connection, used from one thread at a time.
public final class JobQueue {
    public let connection: PostgresConnection
    /// The name the worker's leases carry (`monsoon_jobs.leased_by`, `cluster status`).
    public let worker: String
    /// How long a claim or a renewal holds a job.
    public let leaseSeconds: Double

    public init(connection: PostgresConnection, worker: String, leaseSeconds: Double = 60) {
        self.connection = connection
        self.worker = worker
        self.leaseSeconds = leaseSeconds
    }

    /// The channel an enqueue notifies (once per transaction), and workers listen on.
    public static let channel = "monsoon_jobs"
}

/// A job held by a worker: its id and its lease's fencing token.
public struct Lease: Sendable, Hashable, CustomStringConvertible {
    /// The job's id.
    public var job: Int64
    /// The fencing token of the claim: a number never given out before, from a sequence.
    public var token: Int64

    public init(job: Int64, token: Int64) {
        self.job = job
        self.token = token
    }

    public var description: String { "job \(job) (lease \(token))" }
}

/// A job a claim returned, with what running it needs: the arguments it was queued with
/// (``NewJob``). A refresh reads its feed's validators with the feed's rules, not from its job.
public struct ClaimedJob: Sendable, Hashable {
    /// What a job does.
    public enum Kind: String, Sendable {
        /// Reads a feed and queues its new episodes.
        case refresh
        /// Downloads an episode's file.
        case download
    }

    public var lease: Lease
    public var kind: Kind
    /// The host the job's URL names (its politeness row).
    public var host: String
    /// The host its redirects ended at the last time, if known.
    public var answeredHost: String?
    /// This claim's attempt, from 1.
    public var attempt: Int
    public var feedID: Int64?
    public var episodeID: Int64?
    /// The feed's URL (refresh) or the episode's enclosure (download).
    public var url: String
    /// The feed's URL, of either kind.
    public var feedURL: String?
    /// The length the feed declares for the enclosure (download).
    public var expectedLength: Int64?
    /// Where the file goes, relative to the worker's folder, without its extension: the worker
    /// adds the one the server's answer gives, as a local archive does (download).
    public var path: String?
    /// The most bytes the file may have, when the feed's rules say (`archive --max-size`; download).
    public var maxBytes: Int64?
    /// Whether workers died twice while running it (see `JobQueue.claim(slots:suspects:)`).
    public var isSuspect = false
    /// Whether downloads from its host were redirected to another host before (nil: not known yet).
    public var hostRedirects: Bool?
    /// Its hosts that space their requests (a least interval), whose next request the claim
    /// reserved: the job's first request to each goes at once (see `JobQueue.reserveRequest`).
    public var reserved: Set<String> = []
}

/// A job's state in the shared queue.
public enum JobState: String, Sendable, CaseIterable {
    /// Due and waiting for a worker.
    case available
    /// Waiting for its time (`run_at`): a retry's backoff.
    case scheduled
    /// Held by a worker's lease.
    case running
    case completed
    /// Failed for good (an error a retry would not fix, or the retries spent).
    case failed
    /// Its attempts were spent by workers that died holding it.
    case dead
    /// Held back by `cluster pause`.
    case paused
}
