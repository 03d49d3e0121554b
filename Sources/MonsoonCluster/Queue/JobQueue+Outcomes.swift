import FoundationEssentials

/// A downloaded file, as the ledger keeps it (the manifest of the whole archive).
public struct LedgerEntry: Sendable, Hashable {
    public var lease: Lease
    /// Where the file is, relative to the worker's folder.
    public var path: String
    public var size: Int64
    /// The SHA-256 of its bytes, in lowercase hex.
    public var sha256: String
    public var finalURL: String?
    public var etag: String?
    public var lastModified: String?
    /// The node (machine) the worker runs on.
    public var node: String

    public init(lease: Lease, path: String, size: Int64, sha256: String, finalURL: String?, etag: String?, lastModified: String?, node: String) {
        self.lease = lease
        self.path = path
        self.size = size
        self.sha256 = sha256
        self.finalURL = finalURL
        self.etag = etag
        self.lastModified = lastModified
        self.node = node
    }
}

extension JobQueue {
    /// Completes download jobs and writes their ledger rows, in one statement for the batch.
    /// Fenced: a job completes only under the lease that claimed it, still running. An episode's
    /// row replaces the one it had (a download of it again): one file per episode.
    /// - Returns: the leases that completed; the others were lost (their files must go).
    public func complete(_ entries: [LedgerEntry]) throws(PostgresError) -> Set<Lease> {
        guard !entries.isEmpty else { return [] }
        let rows = try connection.execute("""
            WITH done AS (
                UPDATE monsoon_jobs j
                SET state = 'completed', finished_at = now(), bytes = d.size, last_error = NULL, lease_expires_at = NULL
                FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
                     AS d(id, token, size, path, sha256, final_url, etag, last_modified)
                WHERE j.id = d.id AND j.lease_token = d.token AND j.state = 'running'
                RETURNING j.id, j.episode_id, j.lease_token, j.leased_by, d.size, d.path, d.sha256, d.final_url, d.etag, d.last_modified
            )
            INSERT INTO monsoon_ledger AS l (job_id, episode_id, path, size, sha256, final_url, etag, last_modified, worker, node, lease_token)
            SELECT id, episode_id, path, size, sha256, final_url, etag, last_modified, leased_by, $9, lease_token FROM done ORDER BY episode_id
            ON CONFLICT (episode_id) DO UPDATE SET job_id = excluded.job_id, path = excluded.path, size = excluded.size, sha256 = excluded.sha256,
                final_url = excluded.final_url, etag = excluded.etag, last_modified = excluded.last_modified, worker = excluded.worker,
                node = excluded.node, lease_token = excluded.lease_token, completed_at = excluded.completed_at
            RETURNING l.job_id AS job, l.lease_token AS token
            """, [PostgresArray(entries.map(\.lease.job)), PostgresArray(entries.map(\.lease.token)), PostgresArray(entries.map(\.size)),
                  PostgresArray(entries.map { Optional($0.path) }), PostgresArray(entries.map { Optional($0.sha256) }),
                  PostgresArray(entries.map(\.finalURL)), PostgresArray(entries.map(\.etag)), PostgresArray(entries.map(\.lastModified)),
                  entries[0].node])
        return try Self.leases(rows)
    }

    /// Puts finished files in place while their jobs are locked as this worker's, then completes
    /// the jobs placed and writes their ledger rows, all in one transaction.
    ///
    /// Each job's row is locked (`FOR UPDATE`) with its token and state checked before `place`
    /// runs for it: while the lock holds, no other worker can take the job (the reaper skips a
    /// locked row, and a claim waits for it), so a file only ever takes its name under a lease
    /// that still holds, however long this worker was paused before. A job not found so was lost
    /// meanwhile: its file must not be placed.
    /// - Parameter place: puts an entry's file in place; false when it could not (its job waits
    ///   to run again, and is not completed).
    /// - Returns: the leases that still held (placed or not), and those completed.
    public func completeHolding(_ entries: [LedgerEntry], place: (LedgerEntry) -> Bool) throws(PostgresError) -> (held: Set<Lease>, completed: Set<Lease>) {
        guard !entries.isEmpty else { return ([], []) }
        return try connection.transaction { () throws(PostgresError) -> (held: Set<Lease>, completed: Set<Lease>) in
            let locked = try Self.leases(connection.execute("""
                SELECT j.id AS job, j.lease_token AS token FROM monsoon_jobs j
                JOIN unnest($1::bigint[], $2::bigint[]) AS l(id, token) ON j.id = l.id AND j.lease_token = l.token
                WHERE j.state = 'running' AND j.leased_by = $3
                ORDER BY j.id
                FOR UPDATE OF j
                """, [PostgresArray(entries.map(\.lease.job)), PostgresArray(entries.map(\.lease.token)), worker]))
            let placed = entries.filter { locked.contains($0.lease) && place($0) }
            return (locked, try complete(placed))
        }
    }

    /// Whether the ledger records a file at `path` (relative to the workers' folder) for another
    /// episode than the one of `lease`'s job: a file there is then another episode's, which
    /// placing must never replace. (An earlier download of the same episode, by this job or by
    /// one since cleaned away, may be replaced.)
    public func recordsAnother(_ path: String, than lease: Lease) throws(PostgresError) -> Bool {
        try connection.execute("""
            SELECT 1 FROM monsoon_ledger l
            WHERE l.path = $1 AND l.job_id <> $2 AND (l.episode_id IS NULL OR l.episode_id IS DISTINCT FROM (SELECT episode_id FROM monsoon_jobs WHERE id = $2))
            LIMIT 1
            """, [path, lease.job]).count > 0
    }

    /// Completes a job that leaves no file (a feed's refresh). Fenced: run it first in the
    /// transaction that writes what the job found, which must roll back when it returns false
    /// (another worker holds the job now, and writes its own findings).
    /// - Returns: whether the lease still held.
    public func finish(_ lease: Lease) throws(PostgresError) -> Bool {
        try connection.execute("""
            UPDATE monsoon_jobs SET state = 'completed', finished_at = now(), last_error = NULL, lease_expires_at = NULL
            WHERE id = $1 AND lease_token = $2 AND state = 'running'
            RETURNING id
            """, [lease.job, lease.token]).count == 1
    }

    /// Ends a job that failed for good (a 404, a file over its cap, the engine's retries
    /// spent): `failed`, with its reason. Fenced.
    /// - Returns: whether the lease still held.
    @discardableResult
    public func fail(_ lease: Lease, reason: String) throws(PostgresError) -> Bool {
        try connection.execute("""
            UPDATE monsoon_jobs SET state = 'failed', finished_at = now(), last_error = $3, lease_expires_at = NULL
            WHERE id = $1 AND lease_token = $2 AND state = 'running'
            """, [lease.job, lease.token, reason]).affectedRows == 1
    }

    /// Hands jobs back unfinished (the worker stops): they are available again at once, and the
    /// attempt their claim counted is given back, since they did not fail. Fenced.
    /// - Returns: the leases that still held.
    @discardableResult
    public func release(_ leases: [Lease]) throws(PostgresError) -> Set<Lease> {
        guard !leases.isEmpty else { return [] }
        let rows = try connection.execute("""
            UPDATE monsoon_jobs j
            SET state = 'available', attempts = greatest(0, j.attempts - 1), leased_by = NULL, lease_expires_at = NULL
            FROM unnest($1::bigint[], $2::bigint[]) AS l(id, token)
            WHERE j.id = l.id AND j.lease_token = l.token AND j.state = 'running'
            RETURNING j.id AS job, l.token
            """, [PostgresArray(leases.map(\.job)), PostgresArray(leases.map(\.token))])
        return try Self.leases(rows)
    }

    /// Puts a job back to run again after `seconds` (a failure the next attempt may not have),
    /// or ends it `failed` once its attempts are spent. Fenced.
    ///
    /// `attempted` false: the job never got to try (a host with no room for it), so the attempt
    /// its claim counted is given back and it is never failed for it: waiting for room, however
    /// long, is no failure.
    @discardableResult
    public func retryLater(_ lease: Lease, after seconds: Double, reason: String, attempted: Bool = true) throws(PostgresError) -> Bool {
        try connection.execute("""
            UPDATE monsoon_jobs
            SET attempts = CASE WHEN $5 THEN attempts ELSE greatest(0, attempts - 1) END,
                state = CASE WHEN $5 AND attempts >= max_attempts THEN 'failed' ELSE 'scheduled' END,
                run_at = now() + $3 * interval '1 second', last_error = $4, leased_by = NULL, lease_expires_at = NULL,
                finished_at = CASE WHEN $5 AND attempts >= max_attempts THEN now() END
            WHERE id = $1 AND lease_token = $2 AND state = 'running'
            """, [lease.job, lease.token, seconds, reason, attempted]).affectedRows == 1
    }

    static func leases(_ rows: PostgresResult) throws(PostgresError) -> Set<Lease> {
        var leases = Set<Lease>()
        for row in rows.rows {
            guard let job = try row.int64("job"), let token = try row.int64("token") else { continue }
            leases.insert(Lease(job: job, token: token))
        }
        return leases
    }
}
