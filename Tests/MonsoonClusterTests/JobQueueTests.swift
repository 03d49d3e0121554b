import Foundation
@testable import MonsoonCluster
import Testing

/// The shared queue's claims, leases and outcomes, against a real PostgreSQL: per-host limits
/// that hold across workers, fencing tokens that make a lost lease's writes change nothing, and
/// expired leases taken back, up to a poison job's death.
@Suite(.temporaryPostgres) struct JobQueueTests {
    /// A migrated database with `count` download jobs over `hosts` hosts (`h0`, `h1` …).
    static func queue(jobs count: Int, hosts: Int, worker: String = "w1", lease: Double = 60) async throws -> (JobQueue, String) {
        let server = try temporaryPostgres()
        return try await onThread {
            let url = try server.createDatabase(migrated: true)
            let connection = try PostgresConnection(url)
            let jobs = (0..<count).map { NewJob(kind: .download, key: "episode:\($0)", host: "h\($0 % hosts)") }
            #expect(try JobQueue.enqueue(jobs, on: connection) == count)
            return (JobQueue(connection: connection, worker: worker, leaseSeconds: lease), url)
        }
    }

    static func entry(_ lease: Lease) -> LedgerEntry {
        LedgerEntry(lease: lease, path: "p/\(lease.job).mp3", size: 10, sha256: String(repeating: "0", count: 64), finalURL: nil, etag: nil, lastModified: nil, node: "n1")
    }

    /// A worker that claims and completes jobs until every job is completed, handing one claimed
    /// job in `releasing` back when given; returns how many it completed.
    static func work(_ worker: String, url: String, releasingOneIn releasing: Int? = nil) throws -> Int {
        let queue = JobQueue(connection: try PostgresConnection(url), worker: worker)
        var completed = 0
        var generator = SystemRandomNumberGenerator()
        while true {
            let claimed = try queue.claim(slots: 16)
            if claimed.isEmpty {
                let left = try queue.connection.execute("SELECT count(*) FROM monsoon_jobs WHERE state <> 'completed'").first?.int(0)
                if left == 0 { return completed }
                usleep(1000)   // the rest is running elsewhere, or paused
                continue
            }
            let (back, finished) = claimed.map(\.lease).reduce(into: ([Lease](), [Lease]())) {
                if let releasing, Int.random(in: 0..<releasing, using: &generator) == 0 { $0.0.append($1) } else { $0.1.append($1) }
            }
            #expect(try queue.release(back).count == back.count)
            completed += try queue.complete(finished.map(entry)).count
        }
    }

    static func counts(_ connection: PostgresConnection) throws -> [String: (ready: Int, running: Int)] {
        var counts: [String: (ready: Int, running: Int)] = [:]
        for row in try connection.execute("SELECT host, ready, running FROM monsoon_hosts").rows {
            counts[try row.string(0) ?? ""] = (try row.int(1) ?? -1, try row.int(2) ?? -1)
        }
        return counts
    }

    @Test func aClaimTakesNoMoreOfAHostThanItsFreeConnections() async throws {
        let (queue, _) = try await Self.queue(jobs: 30, hosts: 3)
        try await onThread {
            let first = try queue.claim(slots: 16)
            #expect(first.count == 6, "2 per host by default")
            #expect(Dictionary(grouping: first, by: \.host).mapValues(\.count) == ["h0": 2, "h1": 2, "h2": 2])
            #expect(Set(first.map(\.lease.token)).count == 6 && first.allSatisfy { $0.attempt == 1 })
            #expect(try queue.claim(slots: 16).isEmpty, "every host is at its limit")
            let counts = try Self.counts(queue.connection)
            #expect(counts["h0"]?.ready == 8 && counts["h0"]?.running == 2)
            // One finishes: its host has room for one more, and only it.
            #expect(try queue.complete([Self.entry(first[0].lease)]) == [first[0].lease])
            let next = try queue.claim(slots: 16)
            #expect(next.map(\.host) == [first[0].host])
            // Within a host, jobs go by priority, then due time, then id.
            #expect(next[0].lease.job > first.filter { $0.host == first[0].host }.map(\.lease.job).max()!)
        }
    }

    @Test func heldHostsAndSpacedHostsGiveNothingOrOneAtATime() async throws {
        let (queue, _) = try await Self.queue(jobs: 20, hosts: 2)
        try await onThread {
            try queue.hold(host: "h0", seconds: 3600)
            try ClusterAdmin(connection: queue.connection).setLimits(host: "h1", maxConnections: 5, minIntervalMilliseconds: 3_600_000)
            let claimed = try queue.claim(slots: 16)
            #expect(claimed.map(\.host) == ["h1"], "h0 is held; h1 starts one, then waits its interval")
            #expect(try queue.claim(slots: 16).isEmpty)
            // A shorter hold never shortens a longer one.
            try queue.hold(host: "h0", seconds: 1)
            let held = try queue.connection.execute("SELECT held_until > now() + interval '1 minute' FROM monsoon_hosts WHERE host = 'h0'")
            #expect(try held.first?.bool(0) == true)
        }
    }

    /// A job whose redirects end at another host counts on that host too: claims stay under
    /// both limits, and a worker that learns of a new end host must take a connection there first.
    @Test func theHostARedirectEndsAtIsLimitedToo() async throws {
        let (queue, _) = try await Self.queue(jobs: 12, hosts: 3)
        try await onThread {
            let connection = queue.connection
            try ClusterAdmin(connection: queue.connection).setLimits(host: "cdn", maxConnections: 1, minIntervalMilliseconds: nil)
            try connection.execute("UPDATE monsoon_jobs SET answered_host = 'cdn' WHERE host IN ('h1', 'h2')")
            let claimed = try queue.claim(slots: 16)
            #expect(claimed.filter { $0.host == "h0" }.count == 2)
            #expect(claimed.filter { $0.answeredHost == "cdn" }.count == 1, "the CDN takes one at a time, whoever redirects to it")
            #expect(try Self.counts(connection)["cdn"]?.running == 1)
            // A running job of h0 finds its redirects end at the CDN: no room there.
            let direct = try #require(claimed.first { $0.host == "h0" })
            #expect(try queue.acquire(answeredHost: "cdn", for: direct.lease) == .noRoom)
            #expect(try queue.acquire(answeredHost: "other-cdn", for: direct.lease) == .granted)
            #expect(try Self.counts(connection)["other-cdn"]?.running == 1)
            // A stale lease takes nothing.
            #expect(try queue.acquire(answeredHost: "third-cdn", for: Lease(job: direct.lease.job, token: direct.lease.token + 1000)) == .noRoom)
        }
    }

    /// A job sent back because the host its redirects lead to had no room never tried: it gets
    /// its attempt back, so a busy CDN, however long, never fails a job whose attempts are spent.
    @Test func noRoomWhereTheRedirectsLeadSpendsNoAttempt() async throws {
        let (queue, _) = try await Self.queue(jobs: 1, hosts: 1)
        try await onThread {
            try queue.connection.execute("UPDATE monsoon_jobs SET max_attempts = 1")
            for round in 1...3 {
                try queue.connection.execute("UPDATE monsoon_jobs SET run_at = now()")
                _ = try queue.promoteDueJobs()
                let claimed = try #require(try queue.claim(slots: 1).first, "round \(round)")
                #expect(claimed.attempt == 1)
                #expect(try queue.retryLater(claimed.lease, after: 1, reason: "cdn, where its redirects lead, had no free connection", attempted: false))
                let row = try #require(try queue.connection.execute("SELECT state, attempts FROM monsoon_jobs").first)
                #expect(try row.string(0) == "scheduled" && row.int(1) == 0)
            }
            // A failed try counts: with its one attempt spent, the job ends failed.
            try queue.connection.execute("UPDATE monsoon_jobs SET run_at = now()")
            _ = try queue.promoteDueJobs()
            let claimed = try #require(try queue.claim(slots: 1).first)
            #expect(try queue.retryLater(claimed.lease, after: 1, reason: "HTTP 503"))
            #expect(try queue.connection.execute("SELECT state FROM monsoon_jobs").first?.string(0) == "failed")
        }
    }

    /// Kleppmann's fencing tokens: after a lease is lost and the job claimed again, the old
    /// holder's renewal, completion, failure and release all change nothing.
    @Test func aLostLeaseChangesNothing() async throws {
        let (queue, url) = try await Self.queue(jobs: 1, hosts: 1, lease: 60)
        try await onThread {
            let stale = try #require(try queue.claim(slots: 1).first).lease
            // The lease runs out (the database's clock decides), and another worker takes the job back and again.
            try queue.connection.execute("UPDATE monsoon_jobs SET lease_expires_at = now() - interval '1 second'")
            let other = JobQueue(connection: try PostgresConnection(url), worker: "w2", leaseSeconds: 60)
            #expect(try other.reapExpiredLeases() == (1, 0))
            try other.connection.execute("UPDATE monsoon_jobs SET run_at = now()")
            #expect(try other.promoteDueJobs() == 1)
            let fresh = try #require(try other.claim(slots: 1).first, "one crash makes no suspect: a database away takes back every lease")
            #expect(fresh.lease.job == stale.job && fresh.lease.token > stale.token && fresh.attempt == 2)

            #expect(try queue.renew([stale], bytes: 0, speed: 0).isEmpty)
            #expect(try queue.complete([Self.entry(stale)]).isEmpty)
            #expect(try !queue.fail(stale, reason: "late"))
            #expect(try queue.release([stale]).isEmpty)
            #expect(try !queue.retryLater(stale, after: 1, reason: "late"))
            let row = try #require(try queue.connection.execute("SELECT state, leased_by, lease_token FROM monsoon_jobs").first)
            #expect(try row.string(0) == "running" && row.string(1) == "w2" && row.int64(2) == fresh.lease.token)
            #expect(try queue.connection.execute("SELECT count(*) FROM monsoon_ledger").first?.int(0) == 0)

            #expect(try other.renew([fresh.lease], bytes: 5, speed: 5) == [fresh.lease])
            #expect(try other.complete([Self.entry(fresh.lease)]) == [fresh.lease])
            let ledger = try #require(try queue.connection.execute("SELECT worker, node, lease_token FROM monsoon_ledger").first)
            #expect(try ledger.string(0) == "w2" && ledger.string(1) == "n1" && ledger.int64(2) == fresh.lease.token)
        }
    }

    /// A job that kills every worker that takes it: each claim counts an attempt, each expired
    /// lease is taken back, and once its attempts are spent it ends dead while the rest go on.
    @Test func aPoisonJobEndsDead() async throws {
        let (queue, _) = try await Self.queue(jobs: 2, hosts: 2)
        try await onThread {
            let connection = queue.connection
            try connection.execute("UPDATE monsoon_jobs SET max_attempts = 3")
            for attempt in 1...3 {
                // Two crashes make a suspect: claimed alone from then on.
                let claimed = attempt <= 2 ? try queue.claim(slots: 2) : try queue.claim(slots: 2, suspects: true)
                let poison = try #require(claimed.first { $0.host == "h0" })
                #expect(poison.isSuspect == (attempt > 2))
                if attempt > 2 { #expect(try queue.claim(slots: 2).isEmpty, "a suspect is never claimed with others") }
                #expect(poison.attempt == attempt)
                #expect(claimed.count == (attempt == 1 ? 2 : 1), "the healthy job is claimed once and kept")
                // The worker dies: nobody renews, the lease runs out.
                try connection.execute("UPDATE monsoon_jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [poison.lease.job])
                let reaped = try queue.reapExpiredLeases()
                #expect(reaped == (1, attempt == 3 ? 1 : 0))
                try connection.execute("UPDATE monsoon_jobs SET run_at = now() WHERE state = 'scheduled'")
                try queue.promoteDueJobs()
            }
            let held = try #require(try connection.execute("SELECT id, lease_token FROM monsoon_jobs WHERE host = 'h1' AND state = 'running'").first)
            let survivor = Lease(job: try #require(try held.int64(0)), token: try #require(try held.int64(1)))
            #expect(try queue.complete([Self.entry(survivor)]) == [survivor])
            let states = try connection.execute("SELECT host, state, attempts, last_error FROM monsoon_jobs ORDER BY host")
            #expect(try states.rows.map { try $0.string(1) } == ["dead", "completed"])
            #expect(try states[0].string(3)?.contains("stopped renewing its lease") == true)
            #expect(try queue.claim(slots: 2).isEmpty)
            #expect(try Self.counts(connection).values.allSatisfy { $0.ready == 0 && $0.running == 0 })
        }
    }

    /// Handing jobs back (a worker stopping) gives back the attempt its claim counted.
    @Test func releasedJobsAreAvailableAtOnceWithTheirAttemptBack() async throws {
        let (queue, _) = try await Self.queue(jobs: 3, hosts: 1)
        try await onThread {
            let claimed = try queue.claim(slots: 3)
            #expect(claimed.count == 2)
            #expect(try queue.release(claimed.map(\.lease)).count == 2)
            #expect(try queue.connection.execute("SELECT count(*) FROM monsoon_jobs WHERE state = 'available' AND attempts = 0").first?.int(0) == 3)
            #expect(try queue.claim(slots: 3).count == 2)
        }
    }

    @Test func enqueueingTheSameEpisodesAtOnceGivesOneJobEach() async throws {
        let server = try temporaryPostgres()
        let url = try await onThread { () throws -> String in
            let url = try server.createDatabase()
            _ = try ClusterSchema.migrate(PostgresConnection(url))
            return url
        }
        let jobs = (0..<2_000).map { NewJob(kind: .download, key: "episode:\($0)", host: "h\($0 % 7)") }
        let added = try await withThrowingTaskGroup(of: Int.self) { group in
            for order in [jobs, jobs.reversed()] {
                group.addTask { try await onThread { try JobQueue.enqueue(order, on: PostgresConnection(url)) } }
            }
            return try await group.reduce(0, +)
        }
        #expect(added == 2_000)
        try await onThread {
            let connection = try PostgresConnection(url)
            #expect(try connection.execute("SELECT count(*), count(DISTINCT key) FROM monsoon_jobs").first.map { [try $0.int(0), try $0.int(1)] } == [2_000, 2_000])
            #expect(try connection.execute("SELECT sum(ready) FROM monsoon_hosts").first?.int(0) == 2_000)
        }
    }

    /// Two workers race over 10,000 jobs of 40 hosts. A trigger logs every lease given and ended
    /// (in each job's own order: its row lock orders them), and a check after every statement
    /// counts the running jobs of each host from the jobs themselves: no job ever has two live
    /// leases, none is completed twice, and no host is ever over its limit.
    @Test func racingWorkersNeverShareAJobNorOverrunAHost() async throws {
        let (setup, url) = try await Self.queue(jobs: 10_000, hosts: 40)
        _ = try await onThread {
            try setup.connection.executeScript("""
                CREATE TABLE lease_log (seq bigserial PRIMARY KEY, job bigint, token bigint, event text);
                CREATE FUNCTION log_lease() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF NEW.state = 'running' AND OLD.state <> 'running' THEN
                    INSERT INTO lease_log (job, token, event) VALUES (NEW.id, NEW.lease_token, 'claim');
                  ELSIF OLD.state = 'running' AND NEW.state <> 'running' THEN
                    INSERT INTO lease_log (job, token, event) VALUES (OLD.id, OLD.lease_token, 'end');
                  END IF;
                  RETURN NULL;
                END $$;
                CREATE TRIGGER log_lease AFTER UPDATE ON monsoon_jobs FOR EACH ROW EXECUTE FUNCTION log_lease();
                CREATE FUNCTION check_limits() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF EXISTS (SELECT 1 FROM (SELECT host, count(*) AS n FROM monsoon_jobs WHERE state = 'running' GROUP BY host) r
                             JOIN monsoon_hosts h USING (host) WHERE r.n > h.max_connections) THEN
                    RAISE EXCEPTION 'a host is over its limit';
                  END IF;
                  RETURN NULL;
                END $$;
                CREATE TRIGGER check_limits AFTER UPDATE ON monsoon_jobs FOR EACH STATEMENT EXECUTE FUNCTION check_limits();
                """)
        }
        let done = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in ["w1", "w2"] {
                // Some go back (a worker stopping), the rest complete.
                group.addTask { try await onThread { try Self.work(worker, url: url, releasingOneIn: 10) } }
            }
            return try await group.reduce(0, +)
        }
        #expect(done == 10_000)
        try await onThread {
            let connection = try PostgresConnection(url)
            // Per job, in its own order: claim, end, claim, end… never two claims in a row.
            let overlapping = try connection.execute("""
                SELECT count(*) FROM (
                    SELECT event, lag(event) OVER (PARTITION BY job ORDER BY seq) AS previous FROM lease_log
                ) l WHERE event = 'claim' AND previous = 'claim'
                """).first?.int(0)
            #expect(overlapping == 0)
            #expect(try connection.execute("SELECT count(*), count(DISTINCT job_id) FROM monsoon_ledger").first.map { [try $0.int(0), try $0.int(1)] } == [10_000, 10_000])
            #expect(try connection.execute("SELECT count(DISTINCT token) = count(*) FROM lease_log WHERE event = 'claim'").first?.bool(0) == true)
            #expect(try Self.counts(connection).values.allSatisfy { $0.ready == 0 && $0.running == 0 }, "the counts end where the jobs are")
        }
    }
}
