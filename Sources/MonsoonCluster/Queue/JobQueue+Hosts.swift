import FoundationEssentials

extension JobQueue {
    /// Holds `host` for every worker until `seconds` from now (the database's now): a 429, or a
    /// `Retry-After`. A longer hold already in place stays.
    public func hold(host: String, seconds: Double) throws(PostgresError) {
        try connection.execute("""
            INSERT INTO monsoon_hosts AS h (host, held_until) VALUES ($1, now() + $2 * interval '1 second')
            ON CONFLICT (host) DO UPDATE SET held_until = greatest(coalesce(h.held_until, excluded.held_until), excluded.held_until)
            """, [host, seconds])
    }

    /// Takes a connection on the host a running job's redirects lead to, before the job connects
    /// there: under that host's row lock, only if it has a free connection (and is not held, nor
    /// started too recently), so the limit holds exactly at the end of redirect chains too. The
    /// job then counts on both hosts, and its next claims too. Fenced.
    /// - Returns: `.noRoom` when the host has no room now (or the lease was lost): the worker hands
    ///   the job back (`retryLater`), and a later claim takes it when the host has room.
    public func acquire(answeredHost host: String, for lease: Lease) throws(PostgresError) -> Acquired {
        try connection.transaction { () throws(PostgresError) -> Acquired in
            try connection.execute("INSERT INTO monsoon_hosts (host) VALUES ($1) ON CONFLICT DO NOTHING", [host])
            guard let row = try connection.execute("""
                WITH room AS (
                    SELECT host, min_interval_ms > 0 AS spaced FROM monsoon_hosts
                    WHERE host = $3 AND running < max_connections AND (held_until IS NULL OR held_until <= now())
                      AND (min_interval_ms = 0 OR last_start IS NULL OR last_start <= now() - min_interval_ms * interval '1 millisecond')
                    FOR UPDATE
                )
                UPDATE monsoon_jobs j SET answered_host = room.host FROM room
                WHERE j.id = $1 AND j.lease_token = $2 AND j.state = 'running'
                RETURNING room.spaced
                """, [lease.job, lease.token, host]).first else { return .noRoom }
            guard try row.bool("spaced") == true else { return .granted }
            // Its next request is this job's: a host that spaces its requests is reserved with the connection.
            try connection.execute("UPDATE monsoon_hosts h SET last_start = \(ClusterSchema.reservation), reserved_by = $2 WHERE host = $1", [host, lease.token])
            return .reserved
        }
    }

    /// What `acquire(answeredHost:for:)` answers.
    public enum Acquired: Equatable, Sendable {
        /// No free connection there now (or the lease was lost).
        case noRoom
        /// A connection taken there.
        case granted
        /// A connection taken, and the host's next request reserved for the job (it spaces requests).
        case reserved
    }

    /// What `reserveRequest` answers.
    public enum Reservation: Equatable, Sendable {
        /// The host spaces no requests: ask it at once.
        case notSpaced
        /// Reserved: ask it now, and say when it answered (`requestAnswered`).
        case reserved
        /// Another request is due first: ask again in this many seconds.
        case wait(Double)
    }

    /// Reserves the next request to `host` for a job that runs already (its next hop, or its
    /// download after a look where it leads), when the host spaces its requests: granted once
    /// the host's interval has passed since its last request was answered and no other request
    /// is reserved; the reservation is the host's until `requestAnswered` (or it lapses).
    public func reserveRequest(on host: String, for lease: Lease) throws(PostgresError) -> Reservation {
        try connection.transaction { () throws(PostgresError) -> Reservation in
            guard let row = try connection.execute("""
                SELECT min_interval_ms, extract(epoch FROM last_start + min_interval_ms * interval '1 millisecond' - now())::float8 AS wait,
                       last_start > now() AS taken
                FROM monsoon_hosts WHERE host = $1 FOR UPDATE
                """, [host]).first, let interval = try row.int("min_interval_ms"), interval > 0 else { return .notSpaced }
            // Another request holds the host until it is answered: looked at again a few times an interval.
            if try row.bool("taken") == true { return .wait(min(0.5, max(0.02, Double(interval) / 4000))) }
            if let wait = try row.double("wait"), wait > 0 { return .wait(wait) }
            try connection.execute("UPDATE monsoon_hosts h SET last_start = \(ClusterSchema.reservation), reserved_by = $2 WHERE host = $1", [host, lease.token])
            return .reserved
        }
    }

    /// The requests `lease` reserved on `hosts` were answered (or will not be asked): each host's
    /// interval counts from now, a moment after its request reached the server. A reservation
    /// that lapsed, and went to another job since, is that job's to end.
    /// - Returns: the longest of their intervals, in seconds: when the next request may go.
    @discardableResult
    public func requestAnswered(on hosts: Set<String>, by lease: Lease) throws(PostgresError) -> Double {
        guard !hosts.isEmpty else { return 0 }
        let rows = try connection.execute("""
            UPDATE monsoon_hosts SET last_start = now(), reserved_by = NULL
            WHERE host = ANY($1::text[]) AND min_interval_ms > 0 AND last_start > now() AND reserved_by = $2
            RETURNING min_interval_ms
            """, [PostgresArray(hosts.sorted().map(Optional.some)), lease.token])
        var longest = 0
        for row in rows.rows { longest = max(longest, try row.int("min_interval_ms") ?? 0) }
        return Double(longest) / 1000
    }
}
