import Foundation
@testable import MonsoonCLI
@testable import MonsoonCluster
import MonsoonEngine
import MonsoonTestServer
import Testing

/// The cluster's maintenance: one worker leads it at a time, through a leader row with a lease;
/// the leader takes back expired leases, makes due retries available, and removes finished jobs
/// and gone workers. (That the ledger keeps the rows of removed jobs is the ledger's to test:
/// here its rows still hang off their jobs.)
@Suite(.temporaryPostgres) struct MaintenanceTests {
    static let week: Double = 7 * 86_400

    /// The leader row: who leads, since when.
    static func leader(_ connection: PostgresConnection) throws -> (worker: String?, since: Date?) {
        let row = try connection.execute("SELECT worker, elected_at FROM monsoon_leader").first
        return (try row?.string("worker"), try row?.date("elected_at"))
    }

    @Test func oneWorkerLeadsUntilItsLeadRunsOutOrItStops() async throws {
        let url = try await onThread { try temporaryPostgres().createDatabase(migrated: true) }
        try await onThread {
            let first = JobQueue(connection: try PostgresConnection(url), worker: "w1", leaseSeconds: 8)
            let second = JobQueue(connection: try PostgresConnection(url), worker: "w2", leaseSeconds: 8)
            #expect(try first.lead(for: 30))
            #expect(try !second.lead(for: 30), "the lead is w1's while its lease lasts")
            let elected = try Self.leader(first.connection)
            #expect(try first.lead(for: 30), "the leader renews its lead")
            #expect(try Self.leader(first.connection) == elected, "and stays the one elected then")
            // w1 stops asking (killed, paused): its lead runs out.
            try first.connection.execute("UPDATE monsoon_leader SET expires_at = now() - interval '1 second'")
            #expect(try second.lead(for: 30))
            #expect(try !first.lead(for: 30), "woken, w1 finds that it leads no longer")
            #expect(try Self.leader(first.connection).worker == "w2")
            // w2 stops: it gives the lead up, and w1 takes it at its next try.
            try second.register(node: "n2")
            try second.unregister(node: "n2")
            #expect(try Self.leader(first.connection).worker == nil)
            #expect(try first.lead(for: 30))
        }
    }

    /// Workers that ask at the same moment: one leads, the others do not.
    @Test func workersAskingAtOnceElectOne() async throws {
        let url = try await onThread { try temporaryPostgres().createDatabase(migrated: true) }
        let won = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<6 {
                group.addTask { try await onThread { try JobQueue(connection: PostgresConnection(url), worker: "w\(index)").lead(for: 30) } }
            }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(won == 1)
    }

    /// Jobs finished longer ago than the setting go, in batches, the oldest first; those finished
    /// since, and every job waiting or running (whatever its `finished_at` says), stay.
    @Test func onlyJobsFinishedLongerAgoThanTheSettingAreRemoved() async throws {
        let url = try await onThread { try temporaryPostgres().createDatabase(migrated: true) }
        try await onThread {
            let queue = JobQueue(connection: try PostgresConnection(url), worker: "w1")
            try queue.connection.executeScript("""
                INSERT INTO monsoon_jobs (kind, key, host, state, finished_at)
                SELECT 'download', 'old-' || i, 'cdn.example', (ARRAY['completed', 'failed', 'dead'])[i % 3 + 1], now() - interval '8 days' - i * interval '1 minute'
                FROM generate_series(1, 7) i;
                INSERT INTO monsoon_jobs (kind, key, host, state, finished_at) VALUES
                    ('download', 'recent', 'cdn.example', 'completed', now() - interval '6 days'),
                    ('download', 'waiting', 'cdn.example', 'available', now() - interval '8 days'),
                    ('download', 'retrying', 'cdn.example', 'scheduled', now() - interval '8 days'),
                    ('download', 'paused', 'cdn.example', 'paused', now() - interval '8 days');
                INSERT INTO monsoon_jobs (kind, key, host, state, finished_at, leased_by, lease_token, lease_expires_at)
                VALUES ('download', 'running', 'cdn.example', 'running', now() - interval '8 days', 'w2', 1, now() + interval '1 minute');
                """)
            #expect(try queue.removeFinishedJobs(olderThan: Self.week, limit: 3) == 3)
            #expect(try queue.connection.execute("SELECT count(*) FROM monsoon_jobs WHERE key IN ('old-7', 'old-6', 'old-5')").first?.int(0) == 0,
                    "the oldest first")
            #expect(try queue.removeFinishedJobs(olderThan: Self.week, limit: 3) == 3)
            #expect(try queue.removeFinishedJobs(olderThan: Self.week, limit: 3) == 1)
            #expect(try queue.removeFinishedJobs(olderThan: Self.week, limit: 3) == 0)
            let left = try queue.connection.execute("SELECT key FROM monsoon_jobs ORDER BY key").rows.map { try $0.string(0) }
            #expect(left == ["paused", "recent", "retrying", "running", "waiting"])
            try ClusterAdminTests.expectCountsMatchJobs(queue.connection)
            // A shorter setting: the leader's round removes the job finished six days ago.
            #expect(try queue.maintain(keepingFinished: 5 * 86_400).removedJobs == 1)
        }
    }

    /// One round: leases that ran out taken back (a job whose attempts are spent ends dead), due
    /// retries made available, and workers stopped or silent for long removed; the rest untouched.
    @Test func aRoundTakesBackExpiredLeasesMakesRetriesDueAndRemovesGoneWorkers() async throws {
        let url = try await onThread { try temporaryPostgres().createDatabase(migrated: true) }
        try await onThread {
            let queue = JobQueue(connection: try PostgresConnection(url), worker: "w1")
            try queue.connection.executeScript("""
                INSERT INTO monsoon_jobs (kind, key, host, state, attempts, max_attempts, leased_by, lease_token, lease_expires_at) VALUES
                    ('download', 'lapsed', 'cdn.example', 'running', 8, 10, 'ghost', 1, now() - interval '1 second'),
                    ('download', 'spent', 'cdn.example', 'running', 5, 5, 'ghost', 2, now() - interval '1 second'),
                    ('download', 'held', 'cdn.example', 'running', 1, 5, 'alive', 3, now() + interval '1 minute');
                INSERT INTO monsoon_jobs (kind, key, host, state, run_at) VALUES
                    ('download', 'due', 'cdn.example', 'scheduled', now() - interval '1 second'),
                    ('download', 'later', 'cdn.example', 'scheduled', now() + interval '1 hour');
                INSERT INTO monsoon_workers (name, node, pid, heartbeat_at, stopped_at) VALUES
                    ('ghost', 'n', 1, now() - interval '1 hour', NULL), ('alive', 'n', 2, now(), NULL),
                    ('gone', 'n', 3, now() - interval '1 hour', now() - interval '1 hour'), ('just-stopped', 'n', 4, now(), now());
                """)
            let round = try queue.maintain(keepingFinished: Self.week)
            var expected = JobQueue.Maintenance()
            (expected.reaped, expected.dead, expected.promoted, expected.removedWorkers) = (2, 1, 1, 2)
            #expect(round == expected)
            #expect(round.description == "took back 2 jobs whose leases ran out (1 dead), made 1 job due, removed 2 gone workers")
            let states = try queue.connection.execute("SELECT key, state FROM monsoon_jobs ORDER BY key").rows.map { [try $0.string(0), try $0.string(1)] }
            #expect(states == [["due", "available"], ["held", "running"], ["lapsed", "scheduled"], ["later", "scheduled"], ["spent", "dead"]])
            let workers = try queue.connection.execute("SELECT name FROM monsoon_workers ORDER BY name").rows.map { try $0.string(0) }
            #expect(workers == ["alive", "just-stopped"])
            try ClusterAdminTests.expectCountsMatchJobs(queue.connection)
            // The lapsed job waits out its backoff (256 s after 8 attempts): nothing is left to do.
            #expect(try queue.maintain(keepingFinished: Self.week) == JobQueue.Maintenance())
        }
    }

    /// `--keep-finished` takes days, 0 (remove jobs as soon as they finish) to a hundred years.
    @Test func keepFinishedTakesDays() async {
        for bad in ["-1", "36501", "nan"] {
            let run = await ClusterCommandTests.monsoon(["worker", "--db", "postgresql://127.0.0.1:1/none", "-o", "/tmp", "--keep-finished", bad])
            #expect(run.status == 2 && run.output == "", "\(bad): \(run)")
            #expect(run.errors.contains("--keep-finished takes 0 to 36500 days"), "\(bad): \(run.errors)")
        }
    }

    /// Jobs finished longer ago than the setting (none here: 0 s) are removed by the leader, and
    /// the ledger keeps the rows of their files: `verify --db` still finds every file as listed.
    @Test func finishedJobsGoAndTheLedgerKeepsTheirFiles() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, bodies) = try await ClusterWorkerTests.catalogue(server, episodes: 2, size: 50_000)
        let folder = NSTemporaryDirectory() + "monsoon-maintenance-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        var configuration = ClusterWorkerTests.configuration(url, folder: folder, name: "w1")
        configuration.maintenanceSeconds = 0.2
        configuration.keepFinishedSeconds = 0
        let worker = ClusterWorker(configuration: configuration)
        let run = Task { try await worker.run() }
        defer { worker.stop() }   // a failing test leaves no worker running
        try await waitInDatabase("both jobs completed, then removed", url) { connection in
            try connection.execute("SELECT count(*) FROM monsoon_ledger").first?.int(0) == 2
                && connection.execute("SELECT count(*) FROM monsoon_jobs").first?.int(0) == 0
        }
        worker.stop()
        #expect(try await run.value.completed == 2)
        #expect(ClusterWorkerTests.files(under: folder) == bodies)
        let ledger = try await onThread {
            try PostgresConnection(url).execute("SELECT path, sha256 FROM monsoon_ledger ORDER BY path").rows.map { [try $0.string(0), try $0.string(1)] }
        }
        #expect(ledger == bodies.sorted { $0.key < $1.key }.map { [$0.key, $0.value] })
        let verify = await ClusterCommandTests.monsoon(["verify", "--db", url, folder])
        #expect(verify.status == 0 && verify.errors == "monsoon: verified 2 files in 1 folder: all as listed\n", "\(verify)")
    }

    /// `cluster status` marks the worker whose lead has not run out, in its text and its JSON.
    @Test func statusMarksTheLeader() async throws {
        let url = try await onThread { try temporaryPostgres().createDatabase(migrated: true) }
        let (leading, lapsed) = try await onThread { () throws -> (ClusterStatus, ClusterStatus) in
            let connection = try PostgresConnection(url)
            try connection.executeScript("INSERT INTO monsoon_workers (name, node, pid) VALUES ('w1', 'n', 1), ('w2', 'n', 2)")
            #expect(try JobQueue(connection: connection, worker: "w2").lead(for: 30))
            let leading = try ClusterAdmin(connection: connection).status()
            try connection.execute("UPDATE monsoon_leader SET expires_at = now() - interval '1 second'")
            return (leading, try ClusterAdmin(connection: connection).status())
        }
        #expect(leading.workers.map(\.leads) == [false, true])
        #expect(lapsed.workers.map(\.leads) == [false, false], "a lead that ran out is nobody's")
        let text = ClusterStatusCommand.text(leading, terminalWidth: nil)
        #expect(text.contains("w2 (n, pid 2, leader)\n") && text.contains("w1 (n, pid 1)\n"), "\(text)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(ClusterStatusCommand.json(leading).utf8)) as? [String: Any])
        let workers = try #require(json["workers"] as? [[String: Any]])
        #expect(workers.map { $0["leader"] as? Bool } == [false, true])
    }

    /// Three `monsoon worker` processes: one leads, and only its maintenance moves (a lease
    /// that ran out taken back, its job then run; a finished job and a gone worker removed).
    /// Killed (SIGKILL), it leaves its lead to run out (four maintenance intervals of one second,
    /// with `--lease 4`), and another worker takes the lead and the maintenance over.
    @Test func oneOfThreeWorkersLeadsAndAnotherTakesOverWhenItIsKilled() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, bodies) = try await ClusterWorkerTests.catalogue(server, episodes: 3, size: 50_000)
        // The first episode's job held by a worker that vanished, its lease run out; the second's
        // finished three days ago (kept by default, not with `--keep-finished 2`); the third's
        // kept back for later. A worker silent for an hour.
        let jobs = try await onThread { () throws -> [Int64] in
            let connection = try PostgresConnection(url)
            let jobs = try connection.execute("SELECT id FROM monsoon_jobs ORDER BY priority").rows.map { try $0.int64(0) ?? 0 }
            try connection.execute("""
                UPDATE monsoon_jobs SET state = 'running', attempts = 1, leased_by = 'ghost', lease_token = nextval('monsoon_lease_tokens'),
                    lease_expires_at = now() - interval '1 second' WHERE id = $1
                """, [jobs[0]])
            try connection.execute("UPDATE monsoon_jobs SET state = 'completed', finished_at = now() - interval '3 days' WHERE id = $1", [jobs[1]])
            try connection.execute("UPDATE monsoon_jobs SET state = 'paused' WHERE id = $1", [jobs[2]])
            try connection.execute("INSERT INTO monsoon_workers (name, node, pid, heartbeat_at) VALUES ('ghost', 'elsewhere', 1, now() - interval '1 hour')")
            return jobs
        }
        let base = try ClusterFaultTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }   // a leftover folder in /tmp harms nothing
        let folder = base + "/archive"
        let workers = ["m1", "m2", "m3"].map { name in
            WorkerProcess(name: name, arguments: ["worker", "--db", url, "-o", folder, "--name", name, "--lease", "4", "--poll", "0.3", "--keep-finished", "2"],
                          log: base + "/\(name).log")
        }
        // A failing test must leave no worker behind.
        defer { for worker in workers { worker.kill9() } }
        for worker in workers { try worker.start() }
        try await waitInDatabase("the leader's maintenance took the job back, and removed the finished job and the gone worker", url) { connection in
            try connection.execute("SELECT count(*) FROM monsoon_jobs WHERE id = $1 AND state = 'completed'", [jobs[0]]).first?.int(0) == 1
                && connection.execute("SELECT count(*) FROM monsoon_jobs WHERE id = $1", [jobs[1]]).first?.int(0) == 0
                && connection.execute("SELECT count(*) FROM monsoon_workers WHERE name = 'ghost'").first?.int(0) == 0
        }
        let connection = try await onThread { try PostgresConnection(url) }
        let first = try #require(try await onThread { try Self.leader(connection).worker })
        let leader = try #require(workers.first { $0.name == first })
        #expect(leader.output.contains("leads the cluster's maintenance"), "\(leader.output)")
        #expect(leader.output.contains("maintenance: took back 1 job whose leases ran out"), "\(leader.output)")
        for other in workers where other !== leader {
            #expect(!other.output.contains("leads the cluster's maintenance") && !other.output.contains("maintenance:"), "\(other.name): \(other.output)")
        }

        leader.kill9()
        _ = try await onThread {
            try connection.execute("""
                UPDATE monsoon_jobs SET state = 'running', attempts = 1, leased_by = 'ghost', lease_token = nextval('monsoon_lease_tokens'),
                    lease_expires_at = now() - interval '1 second' WHERE id = $1
                """, [jobs[2]])
        }
        // Its lead runs out after four intervals; either survivor takes it at its next one.
        try await waitInDatabase("another worker took the lead over", seconds: 30, url) { connection in
            try Self.leader(connection).worker.map { $0 != first } ?? false
        }
        try await waitInDatabase("the new leader took the third job back, and it ran", url) { connection in
            try connection.execute("SELECT count(*) FROM monsoon_jobs WHERE id = $1 AND state = 'completed'", [jobs[2]]).first?.int(0) == 1
        }
        let second = try await onThread { try Self.leader(connection).worker }
        let heir = try #require(workers.first { $0.name == second })
        #expect(heir.output.contains("leads the cluster's maintenance") && heir.output.contains("maintenance: took back 1 job whose leases ran out"), "\(heir.output)")
        for other in workers where other !== leader && other !== heir {
            #expect(!other.output.contains("maintenance:"), "\(other.name): \(other.output)")
        }
        for worker in workers where worker !== leader { #expect(try await worker.stop() == 130, "\(worker.output)") }
        var expected = bodies
        expected["Show/episode 1.mp3"] = nil   // its job was marked finished, never run
        #expect(ClusterWorkerTests.files(under: folder) == expected)
        #expect(server.requests(for: "/e/0.mp3").filter { $0.method == "GET" }.count == 1 && server.requests(for: "/e/2.mp3").filter { $0.method == "GET" }.count == 1)
    }
}
