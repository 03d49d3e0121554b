import Foundation
@testable import MonsoonCLI
@testable import MonsoonCluster
import MonsoonEngine
import MonsoonTestServer
import Testing

/// `ClusterAdmin.status()` against a real PostgreSQL: the workers with their held jobs and
/// heartbeats by the database's clock, the hosts with their jobs by state, and the totals and
/// throughput from the ledger.
@Suite(.temporaryPostgres) struct ClusterStatusTests {
    /// A migrated database with three workers, jobs in every state on four hosts, and ledger rows:
    ///
    /// - workers: `w1` alive (2 running jobs, 5,000,000 bytes, 250,000 B/s), `w2` silent for 5
    ///   minutes (1 running job, 120,000 B/s written before it went quiet), `w3` stopped an hour ago;
    /// - `h1.example`: 3 available, 2 running (w1), 4 completed, 1 failed, 2 dead;
    /// - `h2.example`: 1 scheduled, 1 paused, 1 running (w2), at most 4 connections, 500 ms apart;
    /// - `h3.example`: 2 completed; `h4.example`: no job, held for 10 minutes;
    /// - ledger: the 6 completed jobs, 1,000 bytes each 30 s ago (2), 3,000 each 5 min ago (2),
    ///   5,000 each an hour ago (2).
    static func fixture() async throws -> String {
        let server = try temporaryPostgres()
        return try await onThread {
            let url = try server.createDatabase(migrated: true)
            let connection = try PostgresConnection(url)
            try connection.executeScript("""
                INSERT INTO monsoon_workers (name, node, pid, started_at, heartbeat_at, bytes, speed, stopped_at) VALUES
                  ('w1', 'node1', 101, now() - interval '2 hours', now() - interval '3 seconds', 5000000, 250000, NULL),
                  ('w2', 'node2', 202, now() - interval '2 hours', now() - interval '5 minutes', 900, 120000, NULL),
                  ('w3', 'node3', 303, now() - interval '3 hours', now() - interval '1 hour', 42, 0, now() - interval '1 hour');
                INSERT INTO monsoon_jobs (kind, key, host, state, attempts, leased_by, lease_token, lease_expires_at, finished_at, last_error)
                SELECT 'download', 'j' || n, host, state, CASE WHEN state = 'dead' THEN 5 ELSE 1 END,
                       CASE WHEN state = 'running' THEN worker END, CASE WHEN state = 'running' THEN nextval('monsoon_lease_tokens') END,
                       CASE WHEN state = 'running' THEN now() + interval '1 minute' END,
                       CASE WHEN state IN ('completed', 'failed', 'dead') THEN now() END,
                       CASE WHEN state IN ('failed', 'dead') THEN 'gone' END
                FROM (VALUES ('h1.example', 'available', NULL, 3), ('h1.example', 'running', 'w1', 2), ('h1.example', 'completed', NULL, 4),
                             ('h1.example', 'failed', NULL, 1), ('h1.example', 'dead', NULL, 2),
                             ('h2.example', 'scheduled', NULL, 1), ('h2.example', 'paused', NULL, 1), ('h2.example', 'running', 'w2', 1),
                             ('h3.example', 'completed', NULL, 2)) AS s(host, state, worker, count),
                     generate_series(1, s.count) AS g(i), LATERAL (SELECT host || '-' || state || '-' || i AS n) k;
                INSERT INTO monsoon_ledger (job_id, path, size, sha256, worker, node, lease_token, completed_at)
                SELECT id, 'f/' || id, CASE place WHEN 1 THEN 1000 WHEN 2 THEN 1000 WHEN 3 THEN 3000 WHEN 4 THEN 3000 ELSE 5000 END, 'x', 'w1', 'node1', 1,
                       now() - CASE place WHEN 1 THEN interval '30 seconds' WHEN 2 THEN interval '30 seconds'
                                          WHEN 3 THEN interval '5 minutes' WHEN 4 THEN interval '5 minutes' ELSE interval '1 hour' END
                FROM (SELECT id, row_number() OVER (ORDER BY id) AS place FROM monsoon_jobs WHERE state = 'completed') c;
                """)
            let admin = ClusterAdmin(connection: connection)
            try admin.setLimits(host: "h2.example", maxConnections: 4, minIntervalMilliseconds: 500)
            try JobQueue(connection: connection, worker: "w1").hold(host: "h4.example", seconds: 600)
            return url
        }
    }

    @Test func statusCountsWorkersHostsAndTotals() async throws {
        let url = try await Self.fixture()
        let status = try await onThread { try ClusterAdmin(connection: PostgresConnection(url)).status() }
        #expect(status.workers.map(\.name) == ["w1", "w2", "w3"])
        let w1 = status.workers[0], w2 = status.workers[1], w3 = status.workers[2]
        #expect(w1.alive && w1.running == 2 && w1.bytes == 5_000_000 && w1.speed == 250_000 && w1.node == "node1" && w1.pid == 101)
        #expect(w1.heartbeatAge >= 3 && w1.heartbeatAge < 60)
        #expect(!w2.alive && w2.running == 1 && w2.heartbeatAge >= 300 && w2.stoppedAt == nil)
        #expect(!w3.alive && w3.running == 0 && w3.stoppedAt != nil)

        #expect(status.hosts.map(\.host) == ["h1.example", "h2.example", "h3.example", "h4.example"])
        let h1 = status.hosts[0], h2 = status.hosts[1], h3 = status.hosts[2], h4 = status.hosts[3]
        #expect(h1.running == 2 && h1.queued == 3 && h1.jobs[.completed] == 4 && h1.failed == 3 && h1.jobs[.dead] == 2 && h1.maxConnections == 2)
        #expect(h2.running == 1 && h2.queued == 1 && h2.jobs[.paused] == 1 && h2.maxConnections == 4 && h2.minIntervalMilliseconds == 500)
        #expect(h3.running == 0 && h3.queued == 0 && h3.jobs[.completed] == 2 && h3.heldUntil == nil)
        #expect(h4.jobs.total == 0 && h4.heldUntil.map { $0.timeIntervalSince(status.at) > 590 } == true)

        let totals = status.totals
        #expect(totals.jobs.counts == [.available: 3, .scheduled: 1, .running: 3, .completed: 6, .failed: 1, .dead: 2, .paused: 1])
        #expect(totals.files == 6 && totals.bytes == 18_000)
        #expect(totals.lastMinute.jobs == 2 && totals.lastMinute.bytes == 2000 && totals.lastMinute.jobsPerSecond == 2.0 / 60)
        #expect(totals.lastTenMinutes.jobs == 4 && totals.lastTenMinutes.bytes == 8000 && totals.lastTenMinutes.bytesPerSecond == 8000.0 / 600)
        #expect(totals.speed == 250_000, "the live workers' only")
    }

    /// A worker is alive while its renewals come within its own lease (5 s here, silent for 10 s),
    /// and a silent one shows no speed; a job whose lease ran out is not counted running; and a
    /// worker stopped or silent for long is removed.
    @Test func aWorkerIsAliveWithinItsOwnLeaseAndExpiredLeasesAreNotRunning() async throws {
        let url = try await Self.fixture()
        let status = try await onThread { () throws -> ClusterStatus in
            let connection = try PostgresConnection(url)
            try connection.executeScript("""
                INSERT INTO monsoon_workers (name, node, pid, heartbeat_at, speed, lease_seconds) VALUES ('w4', 'node4', 404, now() - interval '10 seconds', 77000, 5);
                UPDATE monsoon_jobs SET lease_expires_at = now() - interval '1 second' WHERE leased_by = 'w2';
                """)
            return try ClusterAdmin(connection: connection).status()
        }
        let w2 = try #require(status.workers.first { $0.name == "w2" }), w4 = try #require(status.workers.first { $0.name == "w4" })
        #expect(!w4.alive && w4.speed == 0 && w4.heartbeatAge < 60, "silent for two of its leases, though under a minute")
        #expect(!w2.alive && w2.speed == 0 && w2.running == 0, "its job's lease ran out: not running")
        let h2 = try #require(status.hosts.first { $0.host == "h2.example" })
        #expect(h2.jobs[.running] == 0 && h2.jobs.expiredLeases == 1)
        #expect(status.totals.jobs[.running] == 2 && status.totals.jobs.expiredLeases == 1 && status.totals.jobs.total == 17)
        #expect(ClusterStatusCommand.text(status, terminalWidth: nil).contains(", 1 whose leases ran out (taken back at the next maintenance) (17 in all)"))
        let left = try await onThread { () throws -> [String] in
            let connection = try PostgresConnection(url)
            #expect(try JobQueue(connection: connection, worker: "w1").removeGoneWorkers() == 1, "w3, stopped an hour ago")
            return try ClusterAdmin(connection: connection).status().workers.map(\.name)
        }
        #expect(left == ["w1", "w2", "w4"])
    }

    /// Why jobs wait, from rows the queue's own statements made: a host at its limit of 2 (a
    /// second worker's claim gets nothing), one held after a 429, one spacing its requests an
    /// hour apart, and one whose only job waits to retry.
    @Test func statusSaysWhyJobsWait() async throws {
        let server = try temporaryPostgres()
        let url = try await onThread { () throws -> String in
            let url = try server.createDatabase(migrated: true)
            let connection = try PostgresConnection(url)
            let jobs = (0..<5).map { NewJob(kind: .download, key: "limited:\($0)", host: "127.0.0.1:8080") }
                + (0..<2).map { NewJob(kind: .download, key: "held:\($0)", host: "held.example") }
                + (0..<3).map { NewJob(kind: .download, key: "spaced:\($0)", host: "spaced.example") }
                + [NewJob(kind: .download, key: "retry:0", host: "retry.example")]
            #expect(try JobQueue.enqueue(jobs, on: connection) == 11)
            try ClusterAdmin(connection: connection).setLimits(host: "spaced.example", maxConnections: nil, minIntervalMilliseconds: 3_600_000)
            let first = JobQueue(connection: connection, worker: "w1"), second = JobQueue(connection: connection, worker: "w2")
            try first.register(node: "node1")
            try second.register(node: "node2")
            try first.hold(host: "held.example", seconds: 600)
            let claimed = try first.claim(slots: 16)
            #expect(Dictionary(grouping: claimed, by: \.host).mapValues(\.count) == ["127.0.0.1:8080": 2, "spaced.example": 1, "retry.example": 1])
            let retry = try #require(claimed.first { $0.host == "retry.example" })
            // Its request answered, the spaced host's next turn is an hour from now.
            try first.requestAnswered(on: ["spaced.example"], by: try #require(claimed.first { $0.host == "spaced.example" }).lease)
            #expect(try first.retryLater(retry.lease, after: 600, reason: "the server answered 503 Service Unavailable"))
            #expect(try second.claim(slots: 16).isEmpty, "the second worker is idle: every job left is held back by its host")
            return url
        }
        let status = try await onThread { try ClusterAdmin(connection: PostgresConnection(url)).status() }
        let hosts = Dictionary(uniqueKeysWithValues: status.hosts.map { ($0.host, $0) })
        #expect(hosts["127.0.0.1:8080"]?.waiting == .atLimit)
        guard case .held(let heldUntil) = hosts["held.example"]?.waiting, case .spaced(let nextStart) = hosts["spaced.example"]?.waiting,
              case .retrying(let nextRetry) = hosts["retry.example"]?.waiting else {
            Issue.record("a host's waiting is not said: \(status.hosts.map { ($0.host, $0.waiting) })")
            return
        }
        #expect(heldUntil.timeIntervalSince(status.at) > 590 && (nextStart?.timeIntervalSince(status.at) ?? 0) > 3590 && nextRetry.timeIntervalSince(status.at) > 590)

        let text = ClusterStatusCommand.text(status, terminalWidth: nil)
        let waiting = text.split(separator: "\n").filter { $0.hasPrefix("waiting: ") }
        #expect(waiting.count == 4, "\(text)")
        #expect(waiting.first == "waiting: 127.0.0.1:8080 is at its limit of 2 connections: 3 jobs wait; 'monsoon cluster host 127.0.0.1:8080 --max-connections N' raises it")
        #expect(waiting.dropFirst().first?.hasPrefix("waiting: held.example is held for 9 min more after it answered 429 Too Many Requests: 2 jobs wait") == true, "\(text)")
        #expect(waiting.dropFirst(2).first?.hasPrefix("waiting: spaced.example takes a request every 60 min at most, the next in 59 min: 2 jobs wait their turn") == true, "\(text)")
        #expect(waiting.last?.hasPrefix("waiting: retry.example: 1 job waits to retry after failing, the next in 9 min") == true, "\(text)")
        // A request under way holds a spaced host's turn until it is answered: no time is known.
        let spaced = try #require(hosts["spaced.example"])
        #expect(ClusterStatusCommand.reason(.spaced(until: nil), of: spaced, at: status.at)
                == "spaced.example takes a request every 60 min at most, the next once the one under way is answered: 2 jobs wait their turn; "
                + "'monsoon cluster host spaced.example --min-interval TIME' changes it")

        let json = ClusterStatusCommand.json(status)
        #expect(json.contains("\"host\": \"127.0.0.1:8080\", \"running\": 2, \"maxConnections\": 2, \"minIntervalMs\": 0, \"heldUntil\": null, "), "\(json)")
        #expect(json.contains("\"waiting\": {\"reason\": \"atLimit\", \"jobs\": 3, \"until\": null}}"), "\(json)")
        for reason in ["held", "spaced", "retrying"] { #expect(json.contains("\"waiting\": {\"reason\": \"\(reason)\", \"jobs\": "), "\(json)") }
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect((object?["hosts"] as? [[String: Any]])?.count == 4)
    }

    /// The status once `condition` holds, read again and again on one connection.
    static func status(_ url: String, seconds: Double = 60, until condition: (ClusterStatus) -> Bool) async throws -> ClusterStatus {
        var last: ClusterStatus?
        try await waitInDatabase("the status never came to pass", seconds: seconds, url, explain: { _ in "\(last?.workers as Any)" }) { connection in
            let status = try ClusterAdmin(connection: connection).status()
            last = status
            return condition(status)
        }
        return last!
    }

    /// A worker's speed is what its transfers received over its last renewal period, the one
    /// under way included: nonzero while a transfer is held in flight mid-body (for the period
    /// in which its first bytes came), 0 once the worker is idle. Renewals come every 2 s here
    /// (a lease of 8 s), and the status is read in a loop on one connection, well within that.
    @Test func theSpeedIsThatOfTheTransfersRunningNow() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, _) = try await ClusterWorkerTests.catalogue(server, episodes: 1, size: 1_000_000)
        let gate = Gate()
        defer { gate.open() }   // a failing test leaves no transfer held
        server.setRoute("/e/0.mp3", Route(body: Body.pattern(size: 1_000_000, seed: 1), contentType: "audio/mpeg", gate: gate, gateAfter: 300_000))
        let folder = NSTemporaryDirectory() + "monsoon-speed-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let worker = ClusterWorker(configuration: ClusterWorkerTests.configuration(url, folder: folder, name: "w1"))
        let run = Task { try await worker.run() }
        defer { worker.stop() }   // a failing test leaves no worker running

        let busy = try await Self.status(url) { $0.totals.speed > 0 }
        #expect(busy.workers.first?.running == 1 && busy.totals.jobs[.completed] == 0, "the transfer is held, not finished")
        #expect(busy.workers.first?.speed == busy.totals.speed)
        #expect(ClusterStatusCommand.text(busy, terminalWidth: nil).contains("workers now \(ByteCount.format(Int(busy.totals.speed)))/s"))

        gate.open()
        let idle = try await Self.status(url) { $0.totals.files == 1 && $0.totals.speed == 0 }
        #expect(idle.workers.first?.alive == true && idle.workers.first?.running == 0 && idle.workers.first?.speed == 0)
        worker.stop()
        #expect(try await run.value.completed == 1)
    }

    @Test func anEmptyQueueHasAnEmptyStatus() async throws {
        let status = try await withConnection { connection in
            try ClusterSchema.migrate(connection)
            return try ClusterAdmin(connection: connection).status()
        }
        #expect(status.workers.isEmpty && status.hosts.isEmpty && status.totals.jobs.total == 0 && status.totals.files == 0)
        #expect(abs(status.at.timeIntervalSinceNow) < 60)
    }

    /// 100,000 jobs over 500 hosts, half of them completed with ledger rows: a few grouped
    /// statements, no round trip per row, so it stays well under a second.
    @Test func statusOfAHundredThousandJobsIsQuick() async throws {
        try await withConnection { connection in
            try ClusterSchema.migrate(connection)
            try connection.executeScript("""
                INSERT INTO monsoon_workers (name, node, pid) SELECT 'w' || i, 'node', i FROM generate_series(1, 50) i;
                INSERT INTO monsoon_jobs (kind, key, host, state, leased_by, lease_token)
                SELECT 'download', 'e' || i, 'h' || (i % 500) || '.example',
                       CASE WHEN i % 2 = 0 THEN 'completed' WHEN i % 97 = 0 THEN 'running' WHEN i % 89 = 0 THEN 'dead' ELSE 'available' END,
                       CASE WHEN i % 2 = 1 AND i % 97 = 0 THEN 'w' || (i % 50 + 1) END, CASE WHEN i % 2 = 1 AND i % 97 = 0 THEN i END
                FROM generate_series(1, 100000) i;
                INSERT INTO monsoon_ledger (job_id, path, size, sha256, worker, node, lease_token, completed_at)
                SELECT id, 'f', 1000, 'x', 'w1', 'node', 1, now() - (id % 1200) * interval '1 second' FROM monsoon_jobs WHERE state = 'completed';
                ANALYZE;
                """)
            let admin = ClusterAdmin(connection: connection)
            let started = Date()
            let status = try admin.status()
            let elapsed = Date().timeIntervalSince(started)
            #expect(status.totals.jobs.total == 100_000 && status.totals.jobs[.completed] == 50_000 && status.totals.files == 50_000)
            #expect(status.hosts.count == 500 && status.workers.count == 50)
            #expect(status.workers.reduce(0) { $0 + $1.running } == status.totals.jobs[.running])
            #expect(status.totals.lastMinute.jobs > 0 && status.totals.lastTenMinutes.jobs > status.totals.lastMinute.jobs)
            #expect(elapsed < 5, "status took \(elapsed) s")
        }
    }
}
