import Foundation
import MonsoonCLI
import MonsoonCluster
import Testing

/// `monsoon cluster status|pause|resume|retry|host`, run in-process against the suite's server.
@Suite(.temporaryPostgres) struct ClusterAdminCommandTests {
    static func monsoon(_ arguments: [String]) async -> ClusterCommandTests.Run {
        await ClusterCommandTests.monsoon(arguments)
    }

    /// The object `text` holds, read back by Foundation's parser.
    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func statusJSONHasTheNumbersOfTheQueue() async throws {
        let url = try await ClusterStatusTests.fixture()
        let run = await Self.monsoon(["cluster", "status", "--json", "--db", url])
        #expect(run.status == 0 && run.errors == "", "\(run.errors)")
        let status = try Self.object(run.output)
        #expect(Set(status.keys) == ["at", "workers", "hosts", "totals"])
        let workers = try #require(status["workers"] as? [[String: Any]])
        #expect(workers.map { $0["name"] as? String } == ["w1", "w2", "w3"])
        #expect(workers[0]["node"] as? String == "node1" && workers[0]["pid"] as? Int == 101 && workers[0]["running"] as? Int == 2)
        #expect(workers[0]["bytes"] as? Int == 5_000_000 && workers[0]["speed"] as? Int == 250_000 && workers[0]["alive"] as? Bool == true)
        #expect((workers[0]["heartbeatAge"] as? Double).map { $0 >= 3 && $0 < 60 } == true)
        #expect(workers[0]["stoppedAt"] is NSNull && (workers[2]["stoppedAt"] as? String)?.hasSuffix("Z") == true)
        #expect(workers[1]["alive"] as? Bool == false && workers[1]["running"] as? Int == 1)
        let heartbeat = try #require(workers[0]["heartbeatAt"] as? String)
        #expect(heartbeat.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression) != nil, "\(heartbeat)")

        let hosts = try #require(status["hosts"] as? [[String: Any]])
        #expect(hosts.map { $0["host"] as? String } == ["h1.example", "h2.example", "h3.example", "h4.example"])
        let h1Jobs = try #require(hosts[0]["jobs"] as? [String: Int])
        #expect(h1Jobs == ["available": 3, "scheduled": 0, "running": 2, "completed": 4, "failed": 1, "dead": 2, "paused": 0, "expiredLeases": 0])
        #expect(hosts[1]["maxConnections"] as? Int == 4 && hosts[1]["minIntervalMs"] as? Int == 500 && hosts[1]["running"] as? Int == 1)
        #expect(hosts[0]["heldUntil"] is NSNull && hosts[3]["heldUntil"] is String)

        let totals = try #require(status["totals"] as? [String: Any])
        #expect(totals["jobs"] as? [String: Int] == ["available": 3, "scheduled": 1, "running": 3, "completed": 6, "failed": 1, "dead": 2, "paused": 1, "expiredLeases": 0])
        #expect(totals["files"] as? Int == 6 && totals["bytes"] as? Int == 18_000 && totals["speed"] as? Int == 250_000)
        let minute = try #require(totals["lastMinute"] as? [String: Any])
        #expect(minute["seconds"] as? Int == 60 && minute["jobs"] as? Int == 2 && minute["bytes"] as? Int == 2000)
        #expect((minute["jobsPerSecond"] as? Double).map { abs($0 - 2.0 / 60) < 1e-9 } == true && minute["bytesPerSecond"] as? Int == 33)
        let tenMinutes = try #require(totals["lastTenMinutes"] as? [String: Any])
        #expect(tenMinutes["jobs"] as? Int == 4 && tenMinutes["bytes"] as? Int == 8000 && tenMinutes["bytesPerSecond"] as? Int == 13)
    }

    @Test func statusTextShowsTheLiveWorkersTheBusyHostsAndTheDeadJobs() async throws {
        let url = try await ClusterStatusTests.fixture()
        let run = await Self.monsoon(["cluster", "status", "--db", url])
        #expect(run.status == 0 && run.errors == "", "\(run.errors)")
        let lines = run.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "STATE   JOBS  HEARTBEAT  SPEED        DOWNLOADED WORKER")
        #expect(lines.contains { $0.hasPrefix("alive   2     ") && $0.hasSuffix(" ago    244 KiB/s    4.8 MiB    w1 (node1, pid 101)") }, "\(lines)")
        #expect(lines.contains("silent  1     5 min ago  -            900 B      w2 (node2, pid 202)"), "a silent worker has no speed: \(lines)")
        #expect(lines.contains("1 stopped worker not shown (--json lists them)"))
        #expect(!run.output.contains("w3"))
        #expect(lines.contains("RUNNING  QUEUED  DONE    FAILED  INTERVAL  HELD       HOST"))
        // Busiest first; h3 has nothing queued, running, held or failed.
        let hosts = lines.compactMap { line in ["h1.example", "h2.example", "h3.example", "h4.example"].first { line.hasSuffix(" " + $0) } }
        #expect(hosts == ["h1.example", "h2.example", "h4.example"])
        #expect(lines.contains("2/2      3       4       3       -         -          h1.example"), "\(lines)")
        #expect(lines.contains("1/4      1       0       0       500 ms    -          h2.example"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("0/2      0       0       0       -         for 9 min  h4.example") || $0.hasPrefix("0/2      0       0       0       -         for 10 min h4.example") },
                "\(lines)")
        #expect(lines.contains("jobs: 3 available, 1 scheduled, 3 running, 6 completed, 1 failed, 2 dead, 1 paused (17 in all)"))
        #expect(lines.contains("downloaded: 6 files, 18 KiB; last minute 2 (0.03/s, 33 B/s); last 10 min 4 (0.01/s, 13 B/s); workers now 244 KiB/s"), "\(lines)")
        #expect(lines.contains("2 jobs dead (attempts spent by workers that stopped holding them): 'monsoon cluster retry --all' runs them again, and the 1 failed"))
    }

    @Test func statusTextCapsTheHostsAndEscapesWhatTheDatabaseSays() async throws {
        let server = try temporaryPostgres()
        let url = try await onThread { () throws -> String in
            let url = try server.createDatabase(migrated: true)
            let connection = try PostgresConnection(url)
            try JobQueue.enqueue((0..<25).map { NewJob(kind: .download, key: "e\($0)", host: "h\($0).example") }, on: connection)
            try connection.execute("INSERT INTO monsoon_workers (name, node, pid) VALUES ($1, 'node', 1)", ["evil\u{1B}[2Jworker"])
            return url
        }
        let run = await Self.monsoon(["cluster", "status", "--db", url])
        #expect(run.status == 0)
        #expect(run.output.components(separatedBy: ".example\n").count - 1 == 20)
        #expect(run.output.contains("… and 5 more hosts (--json lists them)\n"))
        #expect(!run.output.contains("\u{1B}") && run.output.contains("evil\\x1B[2Jworker"), "\(run.output)")
        #expect(!run.output.contains(" dead ("), "no job is dead")
    }

    @Test func pauseResumeAndRetrySayWhatTheyChanged() async throws {
        let (url, feeds) = try await ClusterAdminTests.database()
        let pause = await Self.monsoon(["cluster", "pause", "--feed", "https://feeds.example/1.xml", "--db", url])
        #expect(pause.status == 0 && pause.errors == "", "\(pause.errors)")
        #expect(pause.output == "paused 4 jobs; a running one stops at its worker's next lease renewal\n")
        let again = await Self.monsoon(["cluster", "pause", "--feed", String(feeds[0]), "--db", url])
        #expect(again.status == 0 && again.output == "nothing to pause: no job of feed \(feeds[0]) is available, scheduled or running\n")
        let one = await Self.monsoon(["cluster", "resume", "1", "--db", url])
        #expect(one.status == 0 && one.output == "resumed 1 job\n", "\(one)")
        let resumed = await Self.monsoon(["cluster", "resume", "1", "2", "--db", url, "--quiet"])
        #expect(resumed.status == 0 && resumed.output == "" && resumed.errors == "")
        let all = await Self.monsoon(["cluster", "resume", "--all", "--db", url])
        #expect(all.output == "resumed 2 jobs\n", "\(all)")
        let nothing = await Self.monsoon(["cluster", "resume", "--all", "--db", url])
        #expect(nothing.output == "nothing to resume: no job is paused\n")
        let retry = await Self.monsoon(["cluster", "retry", "3", "4", "--db", url])
        #expect(retry.status == 0 && retry.output == "nothing to retry: none of jobs 3, 4 is failed, dead or waiting to retry\n", "\(retry)")
        try await onThread {
            let connection = try PostgresConnection(url)
            try connection.execute("UPDATE monsoon_jobs SET state = 'dead', attempts = 5 WHERE id = 3")
            try ClusterAdminTests.expectCountsMatchJobs(connection)
        }
        let dead = await Self.monsoon(["cluster", "retry", "3", "--db", url])
        #expect(dead.output == "queued 1 job to run again\n")
        try await onThread { try ClusterAdminTests.expectCountsMatchJobs(PostgresConnection(url)) }
    }

    @Test func unknownJobsAndFeedsFailAndChangeNothing() async throws {
        let (url, _) = try await ClusterAdminTests.database()
        let jobs = await Self.monsoon(["cluster", "pause", "1", "98", "99", "--db", url])
        #expect(jobs.status == 1 && jobs.output == "" && jobs.errors == "monsoon: no jobs have ids 98, 99\n", "\(jobs)")
        let job = await Self.monsoon(["cluster", "pause", "98", "--db", url])
        #expect(job.status == 1 && job.errors == "monsoon: no job has id 98\n")
        let feed = await Self.monsoon(["cluster", "retry", "--feed", "https://user:secret@feeds.example/9.xml", "--db", url])
        #expect(feed.status == 1 && feed.errors == "monsoon: no feed has URL https://***:***@feeds.example/9.xml\n", "\(feed.errors)")
        let id = await Self.monsoon(["cluster", "resume", "--feed", "77", "--db", url])
        #expect(id.status == 1 && id.errors == "monsoon: no feed has id 77\n")
        let paused = try await onThread { try PostgresConnection(url).execute("SELECT count(*) FROM monsoon_jobs WHERE state = 'paused'").first?.int(0) }
        #expect(paused == 0)
    }

    @Test(arguments: [
        (["cluster", "pause"], "monsoon: give job ids, --feed FEED or --all"),
        (["cluster", "resume", "3", "--all"], "monsoon: give job ids, --feed FEED or --all, not more than one of them"),
        (["cluster", "retry", "--feed", "3", "--all"], "monsoon: give job ids, --feed FEED or --all, not more than one of them"),
        (["cluster", "retry", "0"], "monsoon: job ids count from 1"),
        (["cluster", "pause", "x"], "monsoon: the value 'x' is invalid for '<job>': not a whole number"),
        (["cluster", "host", "h.example", "--max-connections", "0"], "monsoon: --max-connections must be from 1 to 1000"),
        (["cluster", "host", "h.example", "--min-interval", "soon"], "monsoon: the value 'soon' is invalid for '--min-interval <time>': not a time up to a day (examples: 500, 500ms, 2s, 1min; a bare number is milliseconds)"),
        (["cluster", "host", "https://h.example/feed.xml"], "monsoon: give a host's name, not a URL; did you mean 'h.example'?"),
        (["cluster", "host"], "monsoon: missing expected argument '<host>'"),
        (["cluster", "status", "--db", ""], "monsoon: no database to use; name it with --db URL or in MONSOON_DB"),
    ])
    func usageErrorsExit2(arguments: [String], firstLine: String) async {
        let run = await Self.monsoon(arguments)
        #expect(run.status == 2 && run.output == "", "\(run)")
        #expect(run.errors.split(separator: "\n").first.map(String.init) == firstLine, "\(run.errors)")
        #expect(run.errors.contains("Usage: monsoon " + arguments.prefix(2).joined(separator: " ")), "\(run.errors)")
    }

    @Test func hostShowsThenSetsItsLimits() async throws {
        let (url, _) = try await ClusterAdminTests.database()
        let shown = await Self.monsoon(["cluster", "host", "CDN.example", "--db", url])
        #expect(shown.status == 0 && shown.output == "cdn.example: at most 2 connections at once, no interval between requests; 0 running, 3 ready\n", "\(shown)")
        let fresh = await Self.monsoon(["cluster", "host", "new.example", "--db", url])
        #expect(fresh.output == "new.example: at most 2 connections at once, no interval between requests (the defaults); 0 running, 0 ready\n")
        let set = await Self.monsoon(["cluster", "host", "cdn.example", "--max-connections", "1", "--min-interval", "1.5s", "--db", url])
        #expect(set.status == 0 && set.output == "cdn.example: at most 1 connection at once, 1.5 s between requests; 0 running, 3 ready\n", "\(set)")
        let quiet = await Self.monsoon(["cluster", "host", "cdn.example", "--min-interval", "250", "--db", url, "--quiet"])
        #expect(quiet.status == 0 && quiet.output == "")
        let after = await Self.monsoon(["cluster", "host", "cdn.example", "--db", url, "--quiet"])
        #expect(after.output == "cdn.example: at most 1 connection at once, 250 ms between requests; 0 running, 3 ready\n", "\(after)")
        let settings = try await onThread { try ClusterAdmin(connection: PostgresConnection(url)).hostSettings("cdn.example") }
        #expect(settings.maxConnections == 1 && settings.minIntervalMilliseconds == 250)
        let minutes = await Self.monsoon(["cluster", "host", "new.example", "--min-interval", "2min", "--db", url])
        #expect(minutes.output == "new.example: at most 2 connections at once, 2 min between requests; 0 running, 0 ready\n", "\(minutes)")
    }
}
