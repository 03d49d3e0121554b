import FoundationEssentials

extension JobQueue {
    /// What one round of the leader's maintenance did.
    public struct Maintenance: Sendable, Hashable, CustomStringConvertible {
        /// Jobs taken back because their leases ran out, and how many of them ended dead.
        public var reaped = 0
        public var dead = 0
        /// Scheduled jobs made available (their backoff ended).
        public var promoted = 0
        /// Finished jobs removed, older than the setting.
        public var removedJobs = 0
        /// Workers removed from `monsoon_workers`, stopped or silent for long.
        public var removedWorkers = 0

        public init() {}

        /// "took back 2 jobs whose leases ran out (1 dead), removed 3 finished jobs".
        public var description: String {
            func count(_ value: Int, _ noun: String) -> String { "\(value) \(noun)\(value == 1 ? "" : "s")" }
            var parts: [String] = []
            if reaped > 0 { parts.append("took back " + count(reaped, "job") + " whose leases ran out" + (dead > 0 ? " (\(dead) dead)" : "")) }
            if promoted > 0 { parts.append("made " + count(promoted, "job") + " due") }
            if removedJobs > 0 { parts.append("removed " + count(removedJobs, "finished job")) }
            if removedWorkers > 0 { parts.append("removed " + count(removedWorkers, "gone worker")) }
            return parts.isEmpty ? "nothing to do" : parts.joined(separator: ", ")
        }
    }

    /// Makes this worker the cluster's leader, or keeps it so, for `seconds` from now: only the
    /// leader maintains the queue. A leader row with a lease, as River's elector keeps, rather
    /// than an advisory lock: a leader that is paused, or whose connection went half-open, keeps
    /// a session lock for as long as the server believes in the connection (hours), and nobody
    /// would take back expired leases meanwhile; a lease runs out on the database's clock. It
    /// also works through a transaction pooler, and survives a restart of the database.
    ///
    /// Every worker asks at each maintenance interval: the leader renews its lease; another takes
    /// the row once that lease has run out. Two leaders at once (one paused past its lease, then
    /// woken for a round) would only repeat work: each maintenance statement checks its rows'
    /// states again on the rows it locks.
    /// - Returns: whether this worker leads now.
    public func lead(for seconds: Double) throws(PostgresError) -> Bool {
        try connection.execute("""
            INSERT INTO monsoon_leader AS l (id, worker, expires_at) VALUES (1, $1, now() + $2 * interval '1 second')
            ON CONFLICT (id) DO UPDATE SET worker = excluded.worker, expires_at = excluded.expires_at,
                elected_at = CASE WHEN l.worker = excluded.worker THEN l.elected_at ELSE now() END
            WHERE l.worker = excluded.worker OR l.expires_at < now()
            RETURNING worker
            """, [worker, seconds]).count == 1
    }

    /// One round of the leader's maintenance: takes back expired leases, makes due retries
    /// available, removes the jobs finished more than `keepFinished` seconds ago (in batches, at
    /// most `removalRounds` of them: the rest waits for the next round, so that the worker's
    /// loop, which renews its leases, is never held long), and the workers gone for long.
    public func maintain(keepingFinished keepFinished: Double) throws(PostgresError) -> Maintenance {
        var round = Maintenance()
        (round.reaped, round.dead) = try reapExpiredLeases()
        round.promoted = try promoteDueJobs()
        for _ in 0..<Self.removalRounds {
            let removed = try removeFinishedJobs(olderThan: keepFinished, limit: Self.removalBatch)
            round.removedJobs += removed
            if removed < Self.removalBatch { break }
        }
        round.removedWorkers = try removeGoneWorkers()
        return round
    }

    /// Finished jobs removed per statement, and statements per maintenance round at the most.
    static let removalBatch = 1000
    static let removalRounds = 10

    /// Removes up to `limit` jobs that finished (completed, failed or dead) more than `seconds`
    /// ago, the oldest first. Rows another transaction holds are skipped (a `cluster retry` of
    /// them, say), and their state is checked again once locked.
    /// - Returns: how many were removed.
    @discardableResult
    public func removeFinishedJobs(olderThan seconds: Double, limit: Int = 1000) throws(PostgresError) -> Int {
        try connection.execute("""
            WITH finished AS MATERIALIZED (
                SELECT id FROM monsoon_jobs WHERE state IN ('completed', 'failed', 'dead') AND finished_at < now() - $1 * interval '1 second'
                ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED
            )
            DELETE FROM monsoon_jobs j USING finished
            WHERE j.id = finished.id AND j.state IN ('completed', 'failed', 'dead')
            """, [seconds, limit]).affectedRows
    }

    /// Removes the workers that stopped, or went silent, more than `after` seconds ago (and more
    /// than ten of their leases): `cluster status` lists each worker while it may still matter.
    @discardableResult
    public func removeGoneWorkers(after seconds: Double = 600) throws(PostgresError) -> Int {
        try connection.execute("""
            DELETE FROM monsoon_workers
            WHERE coalesce(stopped_at, heartbeat_at) < now() - greatest($1, 10 * lease_seconds) * interval '1 second'
            """, [seconds]).affectedRows
    }

    /// Takes back the jobs whose leases expired, in one atomic statement that checks the expiry
    /// again on the rows it locks (a select followed by an update by id alone could overwrite a
    /// job completed in between: River's bug #1302). A job whose attempts are spent ends `dead`;
    /// the others wait a backoff that grows with their attempts, then run elsewhere.
    /// - Returns: how many jobs were taken back, and how many of them ended dead.
    @discardableResult
    public func reapExpiredLeases() throws(PostgresError) -> (reaped: Int, dead: Int) {
        let rows = try connection.execute("""
            WITH expired AS MATERIALIZED (
                SELECT id FROM monsoon_jobs WHERE state = 'running' AND lease_expires_at < now()
                ORDER BY id LIMIT 1000 FOR UPDATE SKIP LOCKED
            )
            UPDATE monsoon_jobs j
            SET state = CASE WHEN j.attempts >= j.max_attempts THEN 'dead' ELSE 'scheduled' END,
                run_at = now() + least(300, 2 ^ j.attempts) * interval '1 second', crashes = j.crashes + 1,
                finished_at = CASE WHEN j.attempts >= j.max_attempts THEN now() END,
                last_error = 'its worker (' || coalesce(j.leased_by, '?') || ') stopped renewing its lease',
                leased_by = NULL, lease_expires_at = NULL
            FROM expired
            WHERE j.id = expired.id AND j.state = 'running' AND j.lease_expires_at < now()
            RETURNING j.state
            """)
        var dead = 0
        for row in rows.rows where try row.string("state") == JobState.dead.rawValue { dead += 1 }
        return (rows.count, dead)
    }

    /// Makes the scheduled jobs whose time has come available (a retry's backoff ended).
    @discardableResult
    public func promoteDueJobs() throws(PostgresError) -> Int {
        try connection.execute("""
            UPDATE monsoon_jobs SET state = 'available'
            WHERE id IN (SELECT id FROM monsoon_jobs WHERE state = 'scheduled' AND run_at <= now()
                         ORDER BY run_at LIMIT 5000 FOR UPDATE SKIP LOCKED)
            """).affectedRows
    }
}
