import Foundation
@testable import MonsoonCluster
import Testing

/// An administrator's pause, resume and retry, by job, by feed and for all, against a real
/// PostgreSQL: the right jobs move, the per-host counts stay those of the jobs, a paused
/// running job is lost to its worker, and resuming or retrying wakes the workers.
@Suite(.temporaryPostgres) struct ClusterAdminTests {
    /// A migrated database with two feeds of three episodes each: feed 1 has its refresh job
    /// (on `feeds.example`) and download jobs that name their episode alone (on `cdn.example`);
    /// feed 2 has download jobs that name their feed too (on `media.example`); two more jobs
    /// belong to no feed (on `other.example`). Eleven jobs in all, available.
    static func database() async throws -> (url: String, feeds: [Int64]) {
        let server = try temporaryPostgres()
        return try await onThread {
            let url = try server.createDatabase(migrated: true)
            let connection = try PostgresConnection(url)
            var feeds: [Int64] = []
            var jobs: [NewJob] = []
            for feed in 1...2 {
                let id = try #require(try connection.execute("INSERT INTO monsoon_feeds (url, folder) VALUES ($1, $2) RETURNING id",
                                                             ["https://feeds.example/\(feed).xml", "feed\(feed)"]).first?.int64(0))
                feeds.append(id)
                if feed == 1 { jobs.append(NewJob(kind: .refresh, key: "feed:\(id)", feedID: id, host: "feeds.example")) }
                for episode in 1...3 {
                    let episodeID = try #require(try connection.execute("""
                        INSERT INTO monsoon_episodes (feed_id, identity, enclosure_url) VALUES ($1, $2, $3) RETURNING id
                        """, [id, "e\(episode)", "https://cdn.example/\(feed)/\(episode).mp3"]).first?.int64(0))
                    jobs.append(NewJob(kind: .download, key: "episode:\(episodeID)", feedID: feed == 2 ? id : nil, episodeID: episodeID,
                                       host: feed == 1 ? "cdn.example" : "media.example"))
                }
            }
            jobs += (1...2).map { NewJob(kind: .download, key: "loose:\($0)", host: "other.example") }
            // Feed 2 has two more episodes' jobs, so that each feed has a number of its own.
            for episode in 4...5 {
                let episodeID = try #require(try connection.execute("""
                    INSERT INTO monsoon_episodes (feed_id, identity, enclosure_url) VALUES ($1, $2, 'https://media.example/x.mp3') RETURNING id
                    """, [feeds[1], "e\(episode)"]).first?.int64(0))
                jobs.append(NewJob(kind: .download, key: "episode:\(episodeID)", feedID: feeds[1], episodeID: episodeID, host: "media.example"))
            }
            #expect(try JobQueue.enqueue(jobs, on: connection) == 11)
            return (url, feeds)
        }
    }

    /// Expects each host's `ready` and `running` to be what the jobs say: its available jobs,
    /// and its running ones plus those whose redirects end there.
    static func expectCountsMatchJobs(_ connection: PostgresConnection, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let drift = try connection.execute("""
            WITH recount AS (
                SELECT host, sum(ready) AS ready, sum(running) AS running FROM (
                    SELECT host, count(*) FILTER (WHERE state = 'available') AS ready, count(*) FILTER (WHERE state = 'running') AS running
                    FROM monsoon_jobs GROUP BY host
                    UNION ALL
                    SELECT answered_host, 0, count(*) FILTER (WHERE state = 'running')
                    FROM monsoon_jobs WHERE answered_host IS NOT NULL AND answered_host <> host GROUP BY answered_host
                ) per_host GROUP BY host
            )
            SELECT coalesce(h.host, r.host) || ': counted ' || coalesce(h.ready, 0) || ' ready, ' || coalesce(h.running, 0)
                   || ' running; the jobs say ' || coalesce(r.ready, 0) || ', ' || coalesce(r.running, 0)
            FROM monsoon_hosts h FULL JOIN recount r ON r.host = h.host
            WHERE coalesce(h.ready, 0) <> coalesce(r.ready, 0) OR coalesce(h.running, 0) <> coalesce(r.running, 0)
            """)
        let lines = try drift.rows.map { try $0.string(0) ?? "" }
        #expect(lines.isEmpty, "\(lines)", sourceLocation: sourceLocation)
    }

    /// The jobs' states, counted.
    static func states(_ connection: PostgresConnection) throws -> [String: Int] {
        var states: [String: Int] = [:]
        for row in try connection.execute("SELECT state, count(*) FROM monsoon_jobs GROUP BY state").rows {
            states[try row.string(0) ?? ""] = try row.int(1)
        }
        return states
    }

    static func state(of job: Int64, _ connection: PostgresConnection) throws -> (state: String, attempts: Int, error: String?) {
        let row = try #require(try connection.execute("SELECT state, attempts, last_error FROM monsoon_jobs WHERE id = $1", [job]).first)
        return (try row.string(0) ?? "", try row.int(1) ?? -1, try row.string(2))
    }

    @Test func pausingARunningJobLosesItsLeaseAndResumingWakesTheWorkers() async throws {
        let (url, _) = try await Self.database()
        try await onThread {
            let queue = JobQueue(connection: try PostgresConnection(url), worker: "w1")
            let admin = ClusterAdmin(connection: try PostgresConnection(url))
            let listener = try PostgresConnection(url)
            try listener.listen(JobQueue.channel)
            let claimed = try queue.claim(slots: 16)
            let paused = try #require(claimed.first { $0.host == "cdn.example" })
            let kept = try #require(claimed.first { $0.host == "media.example" })
            let waiting = try #require(try queue.connection.execute("SELECT id FROM monsoon_jobs WHERE state = 'available' ORDER BY id LIMIT 1").first?.int64(0))
            #expect(try admin.pause(.jobs([paused.lease.job, waiting, 999_999])) == 2)
            try Self.expectCountsMatchJobs(admin.connection)
            #expect(try Self.state(of: paused.lease.job, admin.connection) == ("paused", 0, nil), "the claim's attempt is given back")
            // The worker's next renewal leaves the paused job out: it must stop it; the other goes on.
            #expect(try queue.renew([paused.lease, kept.lease], bytes: 100, speed: 10) == [kept.lease])
            #expect(try queue.complete([JobQueueTests.entry(paused.lease)]).isEmpty)
            #expect(try !queue.fail(paused.lease, reason: "late"))
            #expect(try admin.pause(.jobs([paused.lease.job])) == 0, "paused already")
            #expect(try listener.waitForNotifications(timeout: 0.1) == [], "a pause wakes nobody")

            #expect(try admin.resume(.jobs([paused.lease.job, waiting, kept.lease.job])) == 2)
            try Self.expectCountsMatchJobs(admin.connection)
            #expect(try listener.waitForNotifications(timeout: 10).map(\.channel) == [JobQueue.channel])
            #expect(try admin.resume(.jobs([paused.lease.job])) == 0)
            #expect(try listener.waitForNotifications(timeout: 0.1) == [], "nothing resumed, nobody woken")
            try admin.setLimits(host: "cdn.example", maxConnections: 10, minIntervalMilliseconds: nil)
            let again = try queue.claim(slots: 16)
            #expect(again.contains { $0.lease.job == paused.lease.job && $0.attempt == 1 && $0.lease.token > paused.lease.token })
            try Self.expectCountsMatchJobs(admin.connection)
        }
    }

    @Test func retryRunsFailedAndDeadJobsAgainAsNew() async throws {
        let (url, _) = try await Self.database()
        try await onThread {
            let queue = JobQueue(connection: try PostgresConnection(url), worker: "w1")
            let admin = ClusterAdmin(connection: queue.connection)
            let claimed = try queue.claim(slots: 16)
            #expect(claimed.count >= 4)
            let failed = claimed[0].lease, dead = claimed[1].lease, scheduled = claimed[2].lease, completed = claimed[3].lease
            #expect(try queue.fail(failed, reason: "HTTP 404"))
            try admin.connection.execute("UPDATE monsoon_jobs SET max_attempts = 1, lease_expires_at = now() - interval '1 second' WHERE id = $1", [dead.job])
            #expect(try queue.reapExpiredLeases() == (1, 1))
            #expect(try queue.retryLater(scheduled, after: 3600, reason: "HTTP 503"))
            #expect(try queue.complete([JobQueueTests.entry(completed)]) == [completed])
            try Self.expectCountsMatchJobs(admin.connection)

            #expect(try admin.retry(.jobs([failed.job, dead.job, scheduled.job, completed.job])) == 3)
            try Self.expectCountsMatchJobs(admin.connection)
            #expect(try Self.state(of: failed.job, admin.connection) == ("available", 0, nil))
            #expect(try Self.state(of: dead.job, admin.connection) == ("available", 0, nil))
            #expect(try Self.state(of: scheduled.job, admin.connection) == ("available", 1, "HTTP 503"), "a scheduled job keeps its attempts")
            #expect(try Self.state(of: completed.job, admin.connection).state == "completed", "a completed job is left alone")
            let due = try admin.connection.execute("SELECT bool_and(run_at <= now() AND finished_at IS NULL) FROM monsoon_jobs WHERE id = ANY($1::bigint[])",
                                                   [PostgresArray([failed.job, dead.job, scheduled.job])])
            #expect(try due.first?.bool(0) == true)
            #expect(try admin.retry(.jobs([failed.job])) == 0, "available already")
        }
    }

    @Test func aFeedsJobsAreThoseOfItsEpisodesToo() async throws {
        let (url, feeds) = try await Self.database()
        try await onThread {
            let queue = JobQueue(connection: try PostgresConnection(url), worker: "w1")
            let admin = ClusterAdmin(connection: queue.connection)
            let claimed = try queue.claim(slots: 16)
            #expect(claimed.contains { $0.host == "cdn.example" } && claimed.contains { $0.host == "feeds.example" })
            // Feed 1: its refresh and three downloads that name their episode alone.
            #expect(try admin.pause(.feed(feeds[0])) == 4)
            try Self.expectCountsMatchJobs(admin.connection)
            let pausedHosts = try admin.connection.execute("SELECT DISTINCT host FROM monsoon_jobs WHERE state = 'paused' ORDER BY host")
            #expect(try pausedHosts.rows.map { try $0.string(0) } == ["cdn.example", "feeds.example"])
            #expect(try admin.pause(.feed(feeds[1])) == 5)
            #expect(try Self.states(admin.connection)["paused"] == 9)
            try Self.expectCountsMatchJobs(admin.connection)
            #expect(try admin.resume(.feed(feeds[0])) == 4)
            #expect(try Self.states(admin.connection)["paused"] == 5)
            try Self.expectCountsMatchJobs(admin.connection)

            #expect(try admin.feedID("https://feeds.example/2.xml") == feeds[1])
            #expect(try admin.feedID(String(feeds[0])) == feeds[0])
            #expect(try admin.feedID("https://feeds.example/3.xml") == nil)
            #expect(try admin.feedID("999999") == nil)
            #expect(try admin.missingJobs([3, 999_998, 999_999, 3]) == [999_998, 999_999])
        }
    }

    @Test func allMovesEveryJobInTheRightStatesAndNoOther() async throws {
        let (url, _) = try await Self.database()
        try await onThread {
            let queue = JobQueue(connection: try PostgresConnection(url), worker: "w1")
            let admin = ClusterAdmin(connection: queue.connection)
            // A redirect to a CDN counts there too: its count must go with the pause.
            try admin.setLimits(host: "edge.example", maxConnections: 2, minIntervalMilliseconds: nil)
            try admin.connection.execute("UPDATE monsoon_jobs SET answered_host = 'edge.example' WHERE host = 'media.example'")
            let claimed = try queue.claim(slots: 16)
            #expect(claimed.count == 7, "2 a host, feeds.example's only one, media.example's 2 as edge.example takes 2")
            #expect(try queue.complete([JobQueueTests.entry(claimed[0].lease)]) == [claimed[0].lease])
            #expect(try queue.fail(claimed[1].lease, reason: "HTTP 410"))
            #expect(try queue.retryLater(claimed[2].lease, after: 3600, reason: "HTTP 503"))
            try Self.expectCountsMatchJobs(admin.connection)
            #expect(try Self.states(admin.connection) == ["available": 4, "running": 4, "completed": 1, "failed": 1, "scheduled": 1])

            #expect(try admin.pause(.all) == 9)
            #expect(try Self.states(admin.connection) == ["paused": 9, "completed": 1, "failed": 1])
            try Self.expectCountsMatchJobs(admin.connection)
            #expect(try admin.connection.execute("SELECT sum(ready) + sum(running) FROM monsoon_hosts").first?.int(0) == 0)
            #expect(try queue.claim(slots: 16).isEmpty)

            #expect(try admin.resume(.all) == 9)
            #expect(try Self.states(admin.connection) == ["available": 9, "completed": 1, "failed": 1])
            try Self.expectCountsMatchJobs(admin.connection)
            #expect(try admin.retry(.all) == 1)
            #expect(try Self.states(admin.connection) == ["available": 10, "completed": 1])
            try Self.expectCountsMatchJobs(admin.connection)
        }
    }

    /// Two workers claim and complete 3,000 jobs of 30 hosts while an administrator pauses and
    /// resumes them all, again and again: the counts stay those of the jobs, and every job
    /// completes once.
    @Test func pausingAndResumingWhileWorkersRunKeepsTheCounts() async throws {
        let (_, url) = try await JobQueueTests.queue(jobs: 3000, hosts: 30)
        let done = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in ["w1", "w2"] {
                group.addTask { try await onThread { try JobQueueTests.work(worker, url: url) } }
            }
            group.addTask {
                try await onThread {
                    let admin = ClusterAdmin(connection: try PostgresConnection(url))
                    var paused = 0
                    for _ in 0..<20 {
                        let now = try admin.pause(.all)
                        paused += now
                        try Self.expectCountsMatchJobs(admin.connection)
                        #expect(try admin.resume(.all) == now, "a worker never touches a paused job")
                    }
                    #expect(paused > 0)
                    return 0
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(done == 3000)
        try await onThread {
            let connection = try PostgresConnection(url)
            try Self.expectCountsMatchJobs(connection)
            #expect(try connection.execute("SELECT count(DISTINCT job_id) FROM monsoon_ledger").first?.int(0) == 3000)
        }
    }

    @Test func hostSettingsAreTheDefaultsUntilSet() async throws {
        let (url, _) = try await Self.database()
        try await onThread {
            let admin = ClusterAdmin(connection: try PostgresConnection(url))
            let unknown = try admin.hostSettings("new.example")
            #expect(unknown.isDefault && unknown.maxConnections == 2 && unknown.minIntervalMilliseconds == 0 && unknown.heldUntil == nil)
            let cdn = try admin.hostSettings("cdn.example")
            #expect(!cdn.isDefault && cdn.ready == 3 && cdn.running == 0 && cdn.maxConnections == 2)
            try admin.setLimits(host: "cdn.example", maxConnections: 6, minIntervalMilliseconds: nil)
            try admin.setLimits(host: "cdn.example", maxConnections: nil, minIntervalMilliseconds: 250)
            try admin.setLimits(host: "new.example", maxConnections: nil, minIntervalMilliseconds: 1000)
            #expect(try admin.hostSettings("cdn.example").maxConnections == 6)
            #expect(try admin.hostSettings("cdn.example").minIntervalMilliseconds == 250)
            let set = try admin.hostSettings("new.example")
            #expect(!set.isDefault && set.maxConnections == 2 && set.minIntervalMilliseconds == 1000)
            try JobQueue(connection: admin.connection, worker: "w1").hold(host: "new.example", seconds: 600)
            #expect(try admin.hostSettings("new.example").heldUntil.map { $0 > Date().addingTimeInterval(500) } == true)
        }
    }
}
