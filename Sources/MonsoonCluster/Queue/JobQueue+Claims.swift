import FoundationEssentials

extension JobQueue {
    /// Claims up to `slots` due jobs in one round trip, as River and graphile-worker do: rows
    /// chosen with `FOR UPDATE SKIP LOCKED` in a materialized CTE (a fence: the planner cannot
    /// update more rows than it chose), then marked running with a lease, an attempt counted and
    /// a fencing token each. It reads only the jobs, which carry their arguments, and their hosts.
    ///
    /// Per-host politeness is exact across every worker: a host's row is locked while a claim
    /// takes jobs of it, and the jobs it takes are at most its free connections (its limit less
    /// the jobs running on it, counted in the same transactions that change them). A host that
    /// is held, or whose last start is closer than its least interval, gives none. A job whose
    /// redirects ended at another host the last time counts on that host too, whose row is
    /// locked the same way. Hosts take turns (the one that started longest ago first); within a
    /// host, and across the claim, jobs go by priority, then due time, then id.
    ///
    /// A job whose workers died twice while it ran (crashes, or leases that ran out) is a
    /// suspect: it may be what killed them. Suspects are claimed only with `suspects`, one at a
    /// time, by a worker that runs nothing else, so a job that kills its workers takes at most
    /// one other attempt of each job that ran beside it once; the others are claimed without.
    /// (Once is not enough: a database away longer than a lease takes back every running job.)
    public func claim(slots: Int, suspects: Bool = false) throws(PostgresError) -> [ClaimedJob] {
        guard slots > 0 else { return [] }
        // A worker with nothing running asks for a suspect before every claim, and there is
        // almost never one: a look at the hosts' counts costs a fraction of the claim's statement
        // (its plan, its scan and sort of the hosts, and the counting trigger its update fires
        // even when it changes no row).
        if suspects, try connection.execute(Self.suspectWaitsSQL).first?.bool("waits") != true { return [] }
        let rows = try connection.execute(Self.claimSQL, [suspects ? 1 : slots, worker, leaseSeconds, suspects])
        var jobs: [ClaimedJob] = []
        jobs.reserveCapacity(rows.count)
        for row in rows.rows {
            guard let id = try row.int64("id"), let token = try row.int64("lease_token"),
                  let kind = try row.string("kind").flatMap(ClaimedJob.Kind.init(rawValue:)),
                  let host = try row.string("host"), let attempt = try row.int("attempts") else {
                throw PostgresError(code: .protocolViolation, message: "a claimed job came back without its id, lease, kind or host; please report this")
            }
            // The claim reserved the next request to each of its hosts that spaces requests.
            var reserved = Set<String>()
            if try row.bool("host_spaced") == true { reserved.insert(host) }
            if try row.bool("answered_spaced") == true, let answered = try row.string("answered_host") { reserved.insert(answered) }
            jobs.append(ClaimedJob(lease: Lease(job: id, token: token), kind: kind, host: host, answeredHost: try row.string("answered_host"),
                                   attempt: attempt, feedID: try row.int64("feed_id"), episodeID: try row.int64("episode_id"),
                                   url: try row.string("url") ?? "", feedURL: try row.string("feed_url"),
                                   expectedLength: try row.int64("expected_length"), path: try row.string("path"),
                                   maxBytes: try row.int64("max_bytes"), isSuspect: (try row.int("crashes") ?? 0) >= 2,
                                   hostRedirects: try row.bool("host_redirects"), reserved: reserved))
        }
        return jobs
    }

    /// Renews the leases of `leases` (all of this worker's jobs) in one statement, and the
    /// worker's heartbeat with them: `bytes`, all it has downloaded, and `speed`, its bytes a
    /// second since its last renewal (`cluster status` shows both).
    /// - Returns: the leases renewed. One missing was lost (taken back after it expired, paused
    ///   by `cluster pause`, or handed to another worker): its job must stop at once.
    /// - Parameter speed: nil keeps the speed last written (a renewal of one lease, before a file
    ///   is recorded, measures no period).
    public func renew(_ leases: [Lease], bytes: Int64, speed: Int64?) throws(PostgresError) -> Set<Lease> {
        try connection.transaction { () throws(PostgresError) -> Set<Lease> in
            try connection.execute("""
                UPDATE monsoon_workers SET heartbeat_at = now(), bytes = $2, speed = coalesce($3, speed) WHERE name = $1
                """, [worker, bytes, speed])
            guard !leases.isEmpty else { return [] }
            let rows = try connection.execute("""
                UPDATE monsoon_jobs j SET lease_expires_at = now() + $4 * interval '1 second'
                FROM unnest($1::bigint[], $2::bigint[]) AS l(id, token)
                WHERE j.id = l.id AND j.lease_token = l.token AND j.state = 'running' AND j.leased_by = $3
                RETURNING j.id AS job, j.lease_token AS token
                """, [PostgresArray(leases.map(\.job)), PostgresArray(leases.map(\.token)), worker, leaseSeconds])
            return try Self.leases(rows)
        }
    }

    /// Read from the index of hosts with suspects (schema 6), nearly always empty.
    static let suspectWaitsSQL = "SELECT EXISTS (SELECT 1 FROM monsoon_hosts WHERE suspects > 0 AND ready > 0) AS waits"

    static let claimSQL = """
        WITH candidate_hosts AS MATERIALIZED (
            SELECT host, max_connections - running AS free, min_interval_ms > 0 AS spaced
            FROM monsoon_hosts
            WHERE ready > 0 AND running < max_connections
              AND (held_until IS NULL OR held_until <= now())
              AND (min_interval_ms = 0 OR last_start IS NULL OR last_start <= now() - min_interval_ms * interval '1 millisecond')
              -- Only hosts with a job this claim may take: hosts of suspects alone never fill
              -- an ordinary claim's places, nor the other way round.
              AND CASE WHEN $4 THEN suspects > 0 ELSE ready > suspects END
            ORDER BY last_start NULLS FIRST, host
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        ), candidates AS MATERIALIZED (
            SELECT j.id, j.host, j.answered_host, j.priority, j.run_at
            FROM candidate_hosts c CROSS JOIN LATERAL (
                SELECT id, host, answered_host, priority, run_at FROM monsoon_jobs
                WHERE state = 'available' AND host = c.host AND (crashes >= 2) = $4
                ORDER BY priority, run_at, id
                LIMIT CASE WHEN c.spaced THEN 1 ELSE least(c.free, $1) END
                FOR UPDATE SKIP LOCKED
            ) j
        ), answered_hosts AS MATERIALIZED (
            SELECT host, max_connections - running AS free, min_interval_ms > 0 AS spaced FROM monsoon_hosts
            WHERE host IN (SELECT answered_host FROM candidates WHERE answered_host <> host)
              AND running < max_connections AND (held_until IS NULL OR held_until <= now())
              AND (min_interval_ms = 0 OR last_start IS NULL OR last_start <= now() - min_interval_ms * interval '1 millisecond')
            ORDER BY host
            FOR UPDATE SKIP LOCKED
        ), limits AS (
            SELECT host, free, spaced FROM candidate_hosts
            UNION
            SELECT host, free, spaced FROM answered_hosts
        ), ranked AS (
            -- Each job counts on its host and on the host its redirects last ended at: it is
            -- taken only if it fits under both. Ranks count jobs that will not be taken too, so
            -- a claim may take fewer than it could, never more.
            SELECT p.id, p.priority, p.run_at, l.free, l.spaced,
                   row_number() OVER (PARTITION BY p.host ORDER BY p.priority, p.run_at, p.id) AS place
            FROM (SELECT id, host, priority, run_at FROM candidates
                  UNION ALL
                  SELECT id, answered_host, priority, run_at FROM candidates WHERE answered_host <> host) p
            LEFT JOIN limits l ON l.host = p.host
        ), chosen AS MATERIALIZED (
            SELECT id FROM ranked
            GROUP BY id, priority, run_at
            HAVING bool_and(free IS NOT NULL AND place <= CASE WHEN spaced THEN 1 ELSE free END)
            ORDER BY priority, run_at, id
            LIMIT $1
        ), claimed AS (
            UPDATE monsoon_jobs j
            SET state = 'running', attempts = j.attempts + 1, lease_token = nextval('monsoon_lease_tokens'),
                leased_by = $2, lease_expires_at = now() + $3 * interval '1 second'
            FROM chosen WHERE j.id = chosen.id
            RETURNING j.*
        )
        SELECT c.id, c.kind, c.host, c.answered_host, c.attempts, c.crashes, c.lease_token, c.feed_id, c.episode_id,
               c.url, c.feed_url, c.path, c.max_bytes, c.expected_length, hr.redirects AS host_redirects,
               hr.min_interval_ms > 0 AS host_spaced, ar.min_interval_ms > 0 AS answered_spaced
        FROM claimed c
        LEFT JOIN monsoon_hosts hr ON hr.host = c.host
        LEFT JOIN monsoon_hosts ar ON ar.host = c.answered_host AND c.answered_host <> c.host
        ORDER BY c.priority, c.run_at, c.id
        """
}
