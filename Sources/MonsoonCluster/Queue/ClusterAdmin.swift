import FoundationEssentials
import Glibc

/// The jobs an administrator's command acts on.
public enum JobSelection: Sendable, Hashable {
    /// These jobs, by id.
    case jobs([Int64])
    /// The jobs of a feed: its refresh, and the downloads of its episodes.
    case feed(Int64)
    /// Every job.
    case all
}

/// What an administrator does to the shared queue (`monsoon cluster pause|resume|retry|host|status`),
/// as opposed to what a worker does (``JobQueue``).
///
/// Every change is a few statements over the jobs it selects, usually two, each a transaction
/// of its own that takes the jobs no one else holds (in id order) and skips the others until
/// they are free: it never waits for a job's row while holding others, so a worker's batch,
/// which locks its jobs in no set order, cannot deadlock with it. The per-host counts move with
/// each statement, kept by the same statement triggers as a worker's changes.
///
/// - Important: like its connection, used from one thread at a time.
public struct ClusterAdmin {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Holds back the selected jobs that are available, scheduled or running: `paused` until
    /// `resume`. A running job loses its lease at once (its claim's attempt is given back, since
    /// it did not fail), but its worker learns of it only at its next renewal, which renews only
    /// running jobs (every 15 s by default): until then it may go on downloading, and its host
    /// counts one connection fewer than are open. Its later writes change nothing (fenced).
    /// - Returns: how many jobs were paused.
    @discardableResult
    public func pause(_ selection: JobSelection) throws(PostgresError) -> Int {
        try change(selection, from: [.available, .scheduled, .running], set: """
            state = 'paused', attempts = CASE WHEN j.state = 'running' THEN greatest(0, j.attempts - 1) ELSE j.attempts END,
            leased_by = NULL, lease_expires_at = NULL
            """, notifies: false)
    }

    /// Makes the selected paused jobs available again, due now (a paused retry's backoff is
    /// not waited for), and wakes the workers.
    /// - Returns: how many jobs were resumed.
    @discardableResult
    public func resume(_ selection: JobSelection) throws(PostgresError) -> Int {
        try change(selection, from: [.paused], set: "state = 'available', run_at = now()", notifies: true)
    }

    /// Runs the selected failed and dead jobs again, as new: available now, their attempts back
    /// to 0 and their error cleared. Scheduled ones (waiting for a retry's backoff) become
    /// available now, their attempts kept. Completed and paused jobs are left as they are
    /// (`resume` is for paused ones). Wakes the workers.
    /// - Returns: how many jobs were made available.
    @discardableResult
    public func retry(_ selection: JobSelection) throws(PostgresError) -> Int {
        try change(selection, from: [.failed, .dead, .scheduled], set: """
            state = 'available', run_at = now(), finished_at = NULL,
            attempts = CASE WHEN j.state = 'scheduled' THEN j.attempts ELSE 0 END, crashes = CASE WHEN j.state = 'scheduled' THEN j.crashes ELSE 0 END,
            last_error = CASE WHEN j.state = 'scheduled' THEN j.last_error END
            """, notifies: true)
    }

    /// The id of the feed `reference` names: its id (digits), else its URL exactly as stored;
    /// nil when there is none.
    public func feedID(_ reference: String) throws(PostgresError) -> Int64? {
        if let id = Int64(reference) {
            return try connection.execute("SELECT id FROM monsoon_feeds WHERE id = $1", [id]).first?.int64("id")
        }
        return try connection.execute("SELECT id FROM monsoon_feeds WHERE url = $1", [reference]).first?.int64("id")
    }

    /// Those of `ids` that are no job's, in ascending order.
    public func missingJobs(_ ids: [Int64]) throws(PostgresError) -> [Int64] {
        let rows = try connection.execute("""
            SELECT DISTINCT i FROM unnest($1::bigint[]) AS i WHERE NOT EXISTS (SELECT 1 FROM monsoon_jobs WHERE id = i) ORDER BY i
            """, [PostgresArray(ids)])
        var missing: [Int64] = []
        for row in rows.rows { if let id = try row.int64("i") { missing.append(id) } }
        return missing
    }

    /// Moves the selected jobs in one of `states` to what `set` says (in terms of `j`, the job
    /// as it was), in a transaction that notifies the workers when `notifies` and any changed.
    private func change(_ selection: JobSelection, from states: [JobState], set: String, notifies: Bool) throws(PostgresError) -> Int {
        let (predicate, parameters) = Self.predicate(selection, firstParameter: 2)
        let values = [PostgresArray(states.map { Optional($0.rawValue) })] + parameters
        func pass(_ locking: String) -> String {
            """
            WITH chosen AS MATERIALIZED (
                SELECT id FROM monsoon_jobs WHERE state = ANY($1::text[]) AND \(predicate) ORDER BY id \(locking)
            )
            UPDATE monsoon_jobs j SET \(set) FROM chosen WHERE j.id = chosen.id
            """
        }
        let remaining = "SELECT EXISTS (SELECT 1 FROM monsoon_jobs WHERE state = ANY($1::text[]) AND \(predicate)) AS remains"
        var changed = 0
        var settled = false
        // Passes that skip the jobs a worker holds at the moment (claiming, renewing, completing
        // them) never wait for a job's row, so they cannot deadlock with a worker's batch, whose
        // rows are locked in no set order. Each is a transaction of its own, whose locks end
        // with it: a worker waiting for one of its jobs goes on, and the next pass takes what
        // this one skipped.
        for _ in 0..<Self.skippingPasses where !settled {
            let moved = try connection.execute(pass("FOR UPDATE SKIP LOCKED"), values).affectedRows
            changed += moved
            if moved == 0 {
                settled = try connection.execute(remaining, values).first?.bool("remains") != true
                if !settled { usleep(10_000) }
            }
        }
        // Jobs held all along (a stuck transaction) are waited for, by a last pass that runs
        // again if it loses a deadlock.
        var attempt = 0
        while !settled {
            attempt += 1
            do throws(PostgresError) {
                changed += try connection.execute(pass("FOR UPDATE"), values).affectedRows
                settled = true
            } catch where error.code == .deadlockDetected && attempt < 3 {
                continue
            }
        }
        // Once, however many passes: the workers wake and claim.
        if notifies && changed > 0 { try connection.execute("SELECT pg_notify($1, '')", [JobQueue.channel]) }
        return changed
    }

    /// How many passes skip locked jobs before the last one waits for them (10 ms apart once
    /// only locked ones are left: half a second at the most).
    static let skippingPasses = 50

    /// The condition on `monsoon_jobs` that selects `selection`, its parameters numbered from `firstParameter`.
    static func predicate(_ selection: JobSelection, firstParameter: Int) -> (String, [PostgresValue?]) {
        switch selection {
        case .jobs(let ids):
            return ("id = ANY($\(firstParameter)::bigint[])", [PostgresArray(ids)])
        case .feed(let feed):
            // A download job may carry its episode alone: its feed is the episode's.
            return ("(feed_id = $\(firstParameter) OR episode_id IN (SELECT id FROM monsoon_episodes WHERE feed_id = $\(firstParameter)))", [feed])
        case .all:
            return ("true", [])
        }
    }
}
