import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// A feed's refresh in the shared library, as a worker runs a claimed refresh job: the feed read
/// (conditional GET, every page), its new episodes chosen and named as `monsoon archive` chooses
/// and names them with the feed's rules, then queued for download.
///
/// Everything it finds is written in one transaction that first completes the job under its
/// lease (fenced): a worker that lost the lease (paused, cut off, too slow) writes nothing, and
/// the worker holding the job now writes what it finds. Failures to read the feed are returned
/// for the worker to act on (``Outcome``): the refresh never fails or retries its job itself.
public enum ClusterRefresh {
    public enum Outcome: Sendable, Equatable {
        /// The feed was read and its new episodes queued (perhaps none): the job is completed.
        case refreshed(Summary)
        /// The server answered 304 to the feed's validators: nothing new; the job is completed (and
        /// queued again when the feed's rules changed while it ran).
        case notModified
        /// The feed cannot be read, and reading it again will not change that (404, 410, a page
        /// that is not a feed, a feed too large): the worker `fail`s the job with `reason`.
        case failedPermanently(reason: String)
        /// The feed could not be read this time (the network, a 5xx or 429 answer after the
        /// engine's retries): the worker puts the job back with `retryLater`.
        case failedTransiently(reason: String)
    }

    /// What a refresh that read the feed did.
    public struct Summary: Sendable, Equatable {
        /// Download jobs queued: one per new episode chosen.
        public var queued: Int
        /// Items the rules chose whose media file is not an http or https URL: not queued.
        public var refused: Int
        public var pages: Int
        /// The feed's folder under every worker's root.
        public var folder: String
        /// Why a later page could not be read: its episodes and the later pages' wait for the next
        /// refresh (the feed's validators were not kept, so that one reads it whole).
        public var pageError: String?
        /// The feed's rules changed while it was read (another `archive --db`): its refresh is
        /// queued again, to choose with the new ones.
        public var requeued: Bool
    }

    /// Runs a claimed refresh job: reads the feed through `manager` (its retries, redirect
    /// safety and size caps), and writes on `queue`'s connection.
    ///
    /// - Important: PostgreSQL calls block: call it from a task that runs on a thread of its own
    ///   (a task executor preference), never on Swift's cooperative pool.
    /// - Throws: `SharedLibraryError` `.leaseLost` when the lease was lost before the end (nothing
    ///   was written); a `PostgresError` (nothing was written); `CancellationError`.
    /// - Parameter allowsPrivate: the feed's later pages may be on the workers' own network.
    public static func run(_ job: ClaimedJob, manager: DownloadManager, queue: JobQueue, allowsPrivate: Bool = false) async throws -> Outcome {
        guard job.kind == .refresh, let feedID = job.feedID, let url = URL(string: job.url) else {
            return .failedPermanently(reason: "\(job.lease) is not a feed's refresh")
        }
        let connection = queue.connection
        // The rules and the validators read together (never the claim's validators): new rules
        // come without validators (`addFeeds`), so a refresh that reads them reads the feed whole.
        guard let feed = try connection.execute("SELECT rules::text AS rules, etag, last_modified FROM monsoon_feeds WHERE id = $1", [feedID]).first,
              let rulesText = try feed.string("rules") else {
            return .failedPermanently(reason: "feed \(feedID) is no longer in the shared library")
        }
        let (etag, lastModified) = (try feed.string("etag"), try feed.string("last_modified"))
        let rules: ArchiveRules
        do { rules = try ArchiveRules(json: rulesText) } catch { return .failedPermanently(reason: error.message) }
        var fetcher = FeedFetcher(manager: manager)
        fetcher.allowsPrivate = allowsPrivate
        let turns = PageTurns(queue: queue, job: job)
        defer { try? turns.finish() }   // the worker ends what is left of the job's turns as it settles the job
        let loaded: FeedFetcher.Loaded?
        do throws(FeedError) {
            loaded = try await fetcher.load(url, etag: etag, lastModified: lastModified, followPages: true, waitingForTurn: turns.wait(for:))
        } catch {
            try Task.checkCancellation()
            return outcome(of: error)
        }
        guard let loaded else {
            try connection.transaction { () throws -> Void in
                let current = try lockFeed(of: job, feedID: feedID, on: connection)
                try finish(job.lease, queue: queue)
                try connection.execute("UPDATE monsoon_feeds SET refreshed_at = now() WHERE id = $1", [feedID])
                if try current.string("rules") != rulesText { _ = try JobQueue.queue([.refresh(feedID: feedID, url: url)], on: connection, rearmingFinished: true) }
            }
            return .notModified
        }
        return try await store(loaded, job: job, feedID: feedID, url: url, rules: rules, rulesText: rulesText, fetcher: fetcher, queue: queue, turns: turns)
    }

    /// What the worker does about a feed that could not be read.
    static func outcome(of error: FeedError) -> Outcome {
        switch error.code {
        case .network:
            return .failedTransiently(reason: error.message)
        case .httpStatus:
            let status = error.httpStatus ?? 0
            return status == 408 || status == 429 || status >= 500 ? .failedTransiently(reason: error.message) : .failedPermanently(reason: error.message)
        default:
            return .failedPermanently(reason: error.message)
        }
    }

    /// Locks the feed's row, first in a refresh's transaction as in `addFeeds`' (which takes it
    /// before the job's): the two never wait for each other in a cycle. Returns its folder and
    /// its rules (as text).
    static func lockFeed(of job: ClaimedJob, feedID: Int64, on connection: PostgresConnection) throws -> PostgresRow {
        guard let feed = try connection.execute("SELECT folder, rules::text AS rules FROM monsoon_feeds WHERE id = $1 FOR UPDATE", [feedID]).first else {
            throw SharedLibraryError(.leaseLost, "the feed of \(job.lease) was removed from the shared library while it was read")
        }
        return feed
    }

    /// Completes the job under its lease, in the transaction that writes what it found.
    static func finish(_ lease: Lease, queue: JobQueue) throws {
        guard try queue.finish(lease) else {
            throw SharedLibraryError(.leaseLost, "the refresh of \(lease) lost its lease to another worker; what it found was not kept")
        }
    }
}
