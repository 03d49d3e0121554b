import Foundation

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
    /// - Returns: false when the host has no room now (or the lease was lost): the worker hands
    ///   the job back (`retryLater`), and a later claim takes it when the host has room.
    public func acquire(answeredHost host: String, for lease: Lease) throws(PostgresError) -> Bool {
        try connection.transaction { () throws(PostgresError) -> Bool in
            try connection.execute("INSERT INTO monsoon_hosts (host) VALUES ($1) ON CONFLICT DO NOTHING", [host])
            return try connection.execute("""
                WITH room AS (
                    SELECT host FROM monsoon_hosts
                    WHERE host = $3 AND running < max_connections AND (held_until IS NULL OR held_until <= now())
                      AND (min_interval_ms = 0 OR last_start IS NULL OR last_start <= now() - min_interval_ms * interval '1 millisecond')
                    FOR UPDATE
                )
                UPDATE monsoon_jobs j SET answered_host = room.host FROM room
                WHERE j.id = $1 AND j.lease_token = $2 AND j.state = 'running'
                RETURNING j.id
                """, [lease.job, lease.token, host]).count == 1
        }
    }

    /// Sets a host's politeness, as `ClusterAdmin.setLimits` does.
    public func setLimits(host: String, maxConnections: Int?, minIntervalMilliseconds: Int?) throws(PostgresError) {
        try ClusterAdmin(connection: connection).setLimits(host: host, maxConnections: maxConnections, minIntervalMilliseconds: minIntervalMilliseconds)
    }
}
