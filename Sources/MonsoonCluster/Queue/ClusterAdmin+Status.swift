import FoundationEssentials

extension ClusterAdmin {
    /// The queue now: three grouped statements (workers, hosts, the ledger's totals) in one
    /// repeatable-read snapshot, none of them a round trip per row. The jobs are counted by
    /// host and state in one pass over the table (a sequential scan: tens of milliseconds for
    /// 100,000 jobs), which gives the totals by state too; the workers' running jobs come
    /// from the partial index of running jobs.
    ///
    /// A worker is alive while its renewals come within its own lease; jobs whose leases ran out
    /// are not counted running (`expiredLeases`): their workers are gone or cut off, and the next
    /// maintenance takes them back.
    public func status() throws(PostgresError) -> ClusterStatus {
        try connection.transaction(isolation: .repeatableRead) { () throws(PostgresError) -> ClusterStatus in
            let ledger = try connection.execute("""
                SELECT now() AS at, count(*) AS files, coalesce(sum(size), 0) AS bytes,
                       count(*) FILTER (WHERE completed_at > now() - interval '60 seconds') AS minute_jobs,
                       coalesce(sum(size) FILTER (WHERE completed_at > now() - interval '60 seconds'), 0) AS minute_bytes,
                       count(*) FILTER (WHERE completed_at > now() - interval '600 seconds') AS ten_jobs,
                       coalesce(sum(size) FILTER (WHERE completed_at > now() - interval '600 seconds'), 0) AS ten_bytes
                FROM monsoon_ledger
                """)
            guard let totals = ledger.first, let at = try totals.date("at") else {
                throw PostgresError(code: .protocolViolation, message: "the ledger's totals came back without a row; please report this")
            }
            let workers = try self.workers()
            let hosts = try self.hosts()
            var jobs = JobCounts()
            for host in hosts {
                for (state, count) in host.jobs.counts { jobs[state] += count }
                jobs.expiredLeases += host.jobs.expiredLeases
            }
            return ClusterStatus(at: at, workers: workers, hosts: hosts, totals: ClusterStatus.Totals(
                jobs: jobs, files: try totals.int("files") ?? 0, bytes: try totals.int64("bytes") ?? 0,
                lastMinute: ClusterStatus.Window(seconds: 60, jobs: try totals.int("minute_jobs") ?? 0, bytes: try totals.int64("minute_bytes") ?? 0),
                lastTenMinutes: ClusterStatus.Window(seconds: 600, jobs: try totals.int("ten_jobs") ?? 0, bytes: try totals.int64("ten_bytes") ?? 0),
                speed: workers.filter(\.alive).reduce(0) { $0 + $1.speed }))
        }
    }

    private func workers() throws(PostgresError) -> [ClusterStatus.Worker] {
        let rows = try connection.execute("""
            SELECT w.name, w.node, w.pid, w.started_at, w.heartbeat_at, w.stopped_at, w.bytes, w.speed,
                   extract(epoch FROM now() - w.heartbeat_at)::float8 AS age, coalesce(r.jobs, 0) AS running,
                   w.stopped_at IS NULL AND w.heartbeat_at > now() - w.lease_seconds * interval '1 second' AS alive,
                   EXISTS (SELECT 1 FROM monsoon_leader l WHERE l.worker = w.name AND l.expires_at > now()) AS leads
            FROM monsoon_workers w
            LEFT JOIN (SELECT leased_by, count(*) AS jobs FROM monsoon_jobs WHERE state = 'running' AND (lease_expires_at IS NULL OR lease_expires_at > now()) GROUP BY leased_by) r
              ON r.leased_by = w.name
            ORDER BY w.name
            """)
        var workers: [ClusterStatus.Worker] = []
        workers.reserveCapacity(rows.count)
        for row in rows.rows {
            guard let name = try row.string("name"), let startedAt = try row.date("started_at"), let heartbeatAt = try row.date("heartbeat_at"),
                  let age = try row.double("age") else {
                throw PostgresError(code: .protocolViolation, message: "a worker came back without its name or times; please report this")
            }
            let alive = try row.bool("alive") == true
            workers.append(ClusterStatus.Worker(
                name: name, node: try row.string("node") ?? "", pid: try row.int("pid") ?? 0, startedAt: startedAt, heartbeatAt: heartbeatAt,
                heartbeatAge: age, stoppedAt: try row.date("stopped_at"), bytes: try row.int64("bytes") ?? 0,
                speed: alive ? try row.int64("speed") ?? 0 : 0, running: try row.int("running") ?? 0, alive: alive,
                leads: try row.bool("leads") == true))
        }
        return workers
    }

    /// Every host with a row (a setting, a counter) or a job, with its jobs by state.
    private func hosts() throws(PostgresError) -> [ClusterStatus.Host] {
        let states = JobState.allCases.map(\.rawValue)
        let rows = try connection.execute("""
            SELECT coalesce(h.host, c.host) AS host, coalesce(h.running, 0) AS counted_running,
                   coalesce(h.max_connections, \(Self.defaultMaxConnections)) AS max_connections, coalesce(h.min_interval_ms, 0) AS min_interval_ms,
                   CASE WHEN h.held_until > now() THEN h.held_until END AS held_until,
                   coalesce(h.min_interval_ms > 0 AND h.last_start + h.min_interval_ms * interval '1 millisecond' > now(), false) AS spaced,
                   CASE WHEN h.last_start <= now() AND h.last_start + h.min_interval_ms * interval '1 millisecond' > now()
                        THEN h.last_start + h.min_interval_ms * interval '1 millisecond' END AS next_start_at, c.next_retry_at,
                   \(states.map { "coalesce(c.\($0), 0) AS \($0)" }.joined(separator: ", ")), coalesce(c.expired_leases, 0) AS expired_leases
            FROM monsoon_hosts h
            FULL JOIN (
                SELECT host, \(states.map { "count(*) FILTER (WHERE state = '\($0)'\($0 == "running" ? " AND (lease_expires_at IS NULL OR lease_expires_at > now())" : "")) AS \($0)" }.joined(separator: ", ")),
                       count(*) FILTER (WHERE state = 'running' AND lease_expires_at <= now()) AS expired_leases,
                       min(run_at) FILTER (WHERE state = 'scheduled') AS next_retry_at
                FROM monsoon_jobs GROUP BY host
            ) c ON c.host = h.host
            ORDER BY 1
            """)
        var hosts: [ClusterStatus.Host] = []
        hosts.reserveCapacity(rows.count)
        for row in rows.rows {
            var jobs = JobCounts()
            for state in JobState.allCases { jobs[state] = try row.int(state.rawValue) ?? 0 }
            jobs.expiredLeases = try row.int("expired_leases") ?? 0
            hosts.append(ClusterStatus.Host(
                host: try row.string("host") ?? "", running: try row.int("counted_running") ?? 0,
                maxConnections: try row.int("max_connections") ?? Self.defaultMaxConnections, minIntervalMilliseconds: try row.int("min_interval_ms") ?? 0,
                heldUntil: try row.date("held_until"), jobs: jobs, spaced: try row.bool("spaced") == true, nextStartAt: try row.date("next_start_at"), nextRetryAt: try row.date("next_retry_at")))
        }
        return hosts
    }
}
