import FoundationEssentials
import Glibc

extension JobQueue {
    /// Registers the worker (again, after a restart under the same name), and takes back the
    /// jobs a previous process of that name held: it is gone, and its attempts count.
    ///
    /// - Throws: `PostgresError` `.nameInUse` when a live worker has the name already: one that
    ///   renewed within a lease on another node, or a running process of it on this node.
    public func register(node: String) throws(PostgresError) {
        try connection.transaction { () throws(PostgresError) in
            if let namesake = try connection.execute("""
                SELECT node, pid, heartbeat_at > now() - $2 * interval '1 second' AS alive FROM monsoon_workers WHERE name = $1 AND stopped_at IS NULL FOR UPDATE
                """, [worker, leaseSeconds]).first, try namesake.bool("alive") == true {
                let other = try namesake.string("node") ?? "", pid = try namesake.int("pid") ?? 0
                // On this node a process that is gone is this worker's previous one (killed): its jobs are taken back below.
                let alive = other != node || (pid > 0 && (kill(pid_t(pid), 0) == 0 || errno == EPERM))
                if alive {
                    throw PostgresError(code: .nameInUse, message: "a worker named \(worker) is running (on \(other), process \(pid)); give this one another --name")
                }
            }
            try connection.execute("""
                INSERT INTO monsoon_workers AS w (name, node, pid, lease_seconds) VALUES ($1, $2, $3, $4)
                ON CONFLICT (name) DO UPDATE SET node = excluded.node, pid = excluded.pid, lease_seconds = excluded.lease_seconds, started_at = now(),
                    heartbeat_at = now(), bytes = 0, speed = 0, stopped_at = NULL
                """, [worker, node, Int(getpid()), leaseSeconds])
            try connection.execute("""
                UPDATE monsoon_jobs
                SET state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'available' END,
                    finished_at = CASE WHEN attempts >= max_attempts THEN now() END,
                    last_error = 'its worker (' || leased_by || ') stopped while running it',
                    leased_by = NULL, lease_expires_at = NULL, crashes = crashes + 1
                WHERE leased_by = $1 AND state = 'running'
                """, [worker])
        }
    }

    /// Hands back the jobs leased to this worker that it does not know it holds: claims whose
    /// answer the connection lost (the database committed them, the worker never read them).
    /// Without this they would wait for their leases to run out. Their attempts are given back.
    @discardableResult
    public func releaseUnknown(holding leases: [Lease]) throws(PostgresError) -> Int {
        try connection.execute("""
            UPDATE monsoon_jobs
            SET state = 'available', attempts = greatest(0, attempts - 1), leased_by = NULL, lease_expires_at = NULL
            WHERE leased_by = $1 AND state = 'running' AND NOT (id = ANY($2::bigint[]))
            """, [worker, PostgresArray(leases.map(\.job))]).affectedRows
    }

    /// Records whether downloads from `host` end at another host, so that workers look where a
    /// download of that host goes before they connect there (or do not bother).
    public func noteRedirects(of host: String, _ redirects: Bool) throws(PostgresError) {
        try connection.execute("UPDATE monsoon_hosts SET redirects = $2 WHERE host = $1 AND redirects IS DISTINCT FROM $2", [host, redirects])
    }

    /// Records where a running job's redirects lead, without taking a connection there (it
    /// goes back to the queue next, to be claimed when that host has room). Fenced.
    public func setAnsweredHost(_ host: String, for lease: Lease) throws(PostgresError) {
        try connection.transaction { () throws(PostgresError) in
            try connection.execute("INSERT INTO monsoon_hosts (host) VALUES ($1) ON CONFLICT DO NOTHING", [host])
            try connection.execute("UPDATE monsoon_jobs SET answered_host = $3 WHERE id = $1 AND lease_token = $2 AND state = 'running'",
                                   [lease.job, lease.token, host])
        }
    }

    /// Marks the worker stopped (`cluster status`): its jobs are back in the shared queue, and its
    /// transfers stopped. Only while the name is still this process's (`node`, this process id): a
    /// worker cut off from the database longer than a lease may have been replaced by one of the
    /// same name elsewhere, whose row stays.
    ///
    /// A worker that led the maintenance gives the lead up, so that another takes it at its next
    /// interval instead of once the lease has run out.
    public func unregister(node: String) throws(PostgresError) {
        try connection.execute("""
            WITH stopped AS (
                UPDATE monsoon_workers SET stopped_at = now(), heartbeat_at = now() WHERE name = $1 AND node = $2 AND pid = $3 AND stopped_at IS NULL
                RETURNING name
            )
            DELETE FROM monsoon_leader WHERE worker IN (SELECT name FROM stopped)
            """, [worker, node, Int(getpid())])
    }

    /// The feed's queued downloads of `job`'s host will likely be redirected where `job`'s was:
    /// their claims count on `host` too from now on.
    public func noteAnsweredHost(_ host: String, for job: ClaimedJob) throws(PostgresError) {
        try connection.transaction { () throws(PostgresError) in
            // The row first: a claim takes a job with an answered host only under that host's row lock.
            try connection.execute("INSERT INTO monsoon_hosts (host) VALUES ($1) ON CONFLICT DO NOTHING", [host])
            try connection.execute("""
                UPDATE monsoon_jobs SET answered_host = $1
                WHERE host = $2 AND feed_id IS NOT DISTINCT FROM $3 AND state IN ('available', 'scheduled', 'paused')
                  AND answered_host IS DISTINCT FROM $1
                """, [host, job.host, job.feedID])
        }
    }

    /// Those of `jobs` that exist and may still run (not completed, failed or dead).
    public func unfinishedJobs(among jobs: [Int64]) throws(PostgresError) -> Set<Int64> {
        var unfinished = Set<Int64>()
        for row in try connection.execute("""
            SELECT id FROM monsoon_jobs WHERE id = ANY($1::bigint[]) AND state NOT IN ('completed', 'failed', 'dead')
            """, [PostgresArray(jobs)]).rows {
            if let id = try row.int64("id") { unfinished.insert(id) }
        }
        return unfinished
    }
}
