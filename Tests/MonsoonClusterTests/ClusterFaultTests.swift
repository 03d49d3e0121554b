import Foundation
@testable import MonsoonCluster
import MonsoonEngine
import MonsoonTestServer
import Synchronization
import Testing

/// Worker processes (the built `monsoon worker`) killed, paused and cut off from the database
/// while they run, against a real PostgreSQL and faulty loopback servers.
@Suite(.temporaryPostgres(own: true), .serialized) struct ClusterFaultTests {
    /// Servers standing for hosts, each with its feeds' episodes; some episodes answer 503 once
    /// or are cut short once, and every body is throttled (by default) so that workers die
    /// mid-transfer.
    struct World {
        var servers: [TestServer]
        var url: String
        /// Expected files (path under the folder → SHA-256).
        var files: [String: String]
        var payload: Int

        func stop() { for server in servers { server.stop() } }
    }

    /// - Parameter held: the paths (on every host) whose answers send `gateAfter` bytes, then wait for `gate`.
    static func world(hosts: Int, feedsPerHost: Int, episodesPerFeed: Int, throttle: Int? = 1 << 20, held: Set<String> = [], gate: Gate? = nil,
                      gateAfter: Int? = nil) async throws -> World {
        let postgres = try temporaryPostgres()
        let servers = try (0..<hosts).map { _ in try TestServer() }
        var files: [String: String] = [:]
        var payload = 0
        var rows: [(feed: String, folder: String, episodes: [(url: URL, name: String, size: Int)])] = []
        var counter = 0
        for (hostIndex, server) in servers.enumerated() {
            for feedIndex in 0..<feedsPerHost {
                let folder = "Feed \(hostIndex)-\(feedIndex)"
                var episodes: [(url: URL, name: String, size: Int)] = []
                for episode in 0..<episodesPerFeed {
                    counter += 1
                    let size = 150_000 + (counter * 7919) % 350_000
                    var faults: [Fault] = []
                    if counter % 12 == 0 { faults.append(.status(503, times: 1, retryAfter: "1")) }
                    if counter % 17 == 0 { faults.append(.dropAfter(bytes: size / 3, times: 1)) }
                    let body = Body.pattern(size: size, seed: UInt64(counter))
                    let path = "/f\(feedIndex)/e\(episode).mp3"
                    let holds = held.contains(path)
                    server.setRoute(path, Route(body: body, contentType: "audio/mpeg", etag: "\"e\(counter)\"", throttle: throttle, faults: faults,
                                                gate: holds ? gate : nil, gateAfter: holds ? gateAfter : nil))
                    episodes.append((server.url(path), "e\(episode)", size))
                    files["\(folder)/e\(episode).mp3"] = body.sha256Hex()
                    payload += size
                }
                rows.append((server.url("/f\(feedIndex)/feed.xml").absoluteString, folder, episodes))
            }
        }
        let url = try await onThread { () throws -> String in
            let url = try postgres.createDatabase(migrated: true)
            let connection = try PostgresConnection(url)
            var jobs: [NewJob] = []
            for row in rows {
                let feed = try #require(try connection.execute("INSERT INTO monsoon_feeds (url, folder) VALUES ($1, $2) RETURNING id", [row.feed, row.folder]).first?.int64(0))
                for (index, episode) in row.episodes.enumerated() {
                    let id = try #require(try connection.execute("""
                        INSERT INTO monsoon_episodes (feed_id, identity, enclosure_url, enclosure_length, file_name) VALUES ($1, $2, $3, $4, $5) RETURNING id
                        """, [feed, "guid-\(index)", episode.url.absoluteString, episode.size, episode.name]).first?.int64(0))
                    jobs.append(.download(episodeID: id, feedID: feed, url: episode.url, feedURL: try #require(URL(string: row.feed)), path: row.folder + "/" + episode.name,
                                          expectedLength: Int64(episode.size), maxBytes: nil, priority: index))
                }
            }
            #expect(try JobQueue.enqueue(jobs, on: connection) == jobs.count)
            return url
        }
        return World(servers: servers, url: url, files: files, payload: payload)
    }

    /// The same world as feeds: each host serves its feeds (`/fK/feed.xml`, RSS) whose episodes it
    /// serves too; nothing is in the database yet (`archive --db` puts it there).
    /// - Returns: the world (`files` by enclosure URL, not by path: the archive names them) and the feeds' URLs.
    static func feedWorld(hosts: Int, feedsPerHost: Int, episodesPerFeed: Int, throttle: Int = 1 << 20) async throws -> (World, [URL]) {
        let postgres = try temporaryPostgres()
        let servers = try (0..<hosts).map { _ in try TestServer() }
        var files: [String: String] = [:]
        var payload = 0
        var feeds: [URL] = []
        var counter = 0
        for (hostIndex, server) in servers.enumerated() {
            for feedIndex in 0..<feedsPerHost {
                var items: [TestItem] = []
                for episode in 0..<episodesPerFeed {
                    counter += 1
                    let size = 150_000 + (counter * 7919) % 350_000
                    var faults: [Fault] = []
                    if counter % 12 == 0 { faults.append(.status(503, times: 1, retryAfter: "1")) }
                    if counter % 17 == 0 { faults.append(.dropAfter(bytes: size / 3, times: 1)) }
                    let body = Body.pattern(size: size, seed: UInt64(counter))
                    let path = "/f\(feedIndex)/e\(episode).mp3"
                    server.setRoute(path, Route(body: body, contentType: "audio/mpeg", etag: "\"e\(counter)\"", throttle: throttle, faults: faults))
                    let url = server.url(path).absoluteString
                    items.insert(TestItem("g-\(hostIndex)-\(feedIndex)-\(episode)", "Episode \(episode)", url, day: episode % 28 + 1), at: 0)
                    files[url] = body.sha256Hex()
                    payload += size
                }
                server.setRoute("/f\(feedIndex)/feed.xml", feedRoute(rssFeed(title: "Feed \(hostIndex)-\(feedIndex)", items), etag: "\"feed\"") )
                feeds.append(server.url("/f\(feedIndex)/feed.xml"))
            }
        }
        let url = try await onThread { try postgres.createDatabase() }
        return (World(servers: servers, url: url, files: files, payload: payload), feeds)
    }

    /// Checks the ledger against the files: one row per episode, each file under its path with
    /// the bytes its enclosure serves, and nothing else in the folder.
    static func expectLedgerMatches(_ world: World, folder: String) async throws {
        let rows = try await onThread {
            try PostgresConnection(world.url).execute("""
                SELECT l.path, l.sha256, e.enclosure_url FROM monsoon_ledger l JOIN monsoon_episodes e ON e.id = l.episode_id
                """).rows.map { (try $0.string(0) ?? "", try $0.string(1) ?? "", try $0.string(2) ?? "") }
        }
        #expect(rows.count == world.files.count, "each episode completed exactly once")
        #expect(Set(rows.map(\.2)) == Set(world.files.keys))
        #expect(rows.allSatisfy { world.files[$0.2] == $0.1 }, "the ledger's SHA-256 is the enclosure's")
        let onDisk = ClusterWorkerTests.files(under: folder).filter { !$0.key.hasSuffix("monsoon-manifest.json") }
        #expect(onDisk == Dictionary(uniqueKeysWithValues: rows.map { ($0.0, $0.1) }), "every file byte-exact under its path, nothing else")
    }

    static func worker(_ name: String, _ world: World, folder: String, lease: Int = 6) -> WorkerProcess {
        WorkerProcess(name: name, arguments: ["worker", "--db", world.url, "-o", folder, "-j", "4", "--name", name, "--lease", "\(lease)", "--poll", "0.3"],
                      log: folder + "/../\(name).log")
    }

    static func ledger(_ url: String) async throws -> (rows: Int, jobs: Int, completed: Int) {
        try await onThread {
            let connection = try PostgresConnection(url)
            let ledger = try #require(try connection.execute("SELECT count(*), count(DISTINCT job_id) FROM monsoon_ledger").first)
            let completed = try connection.execute("SELECT count(*) FROM monsoon_jobs WHERE state = 'completed'").first?.int(0) ?? -1
            return (try ledger.int(0) ?? -1, try ledger.int(1) ?? -1, completed)
        }
    }

    static func temporaryFolder() throws -> String {
        let base = NSTemporaryDirectory() + "monsoon-cluster-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: base + "/archive", withIntermediateDirectories: true)
        return base
    }

    /// A worker that cannot open libcurl says so and exits 1 before it claims a job: the jobs stay
    /// available, no attempt spent (a supervisor restarting it would otherwise wear them out).
    @Test func aWorkerWithoutLibcurlExitsBeforeItClaims() async throws {
        let (world, feeds) = try await Self.feedWorld(hosts: 1, feedsPerHost: 1, episodesPerFeed: 1)
        defer { world.stop() }
        let base = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }   // a leftover folder in /tmp harms nothing
        let archive = WorkerProcess(name: "archive", arguments: ["archive", "--db", world.url, "--quiet"] + feeds.map(\.absoluteString), log: base + "/archive.log")
        try archive.start()
        #expect(try await archive.wait() == 0, "\(archive.output)")
        // A libcurl.so.4 that is no library, found first.
        let libraries = base + "/lib"
        try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
        try Data("not a library\n".utf8).write(to: URL(fileURLWithPath: libraries + "/libcurl.so.4"))
        let searched = [libraries, ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"]].compactMap { $0 }.joined(separator: ":")
        let worker = WorkerProcess(name: "w1", arguments: ["worker", "--db", world.url, "-o", base + "/archive", "--name", "w1", "--poll", "0.3"],
                                   log: base + "/w1.log", environment: ["LD_LIBRARY_PATH": searched])
        defer { worker.kill9() }
        try worker.start()
        #expect(try await worker.wait() == 1)
        #expect(worker.output.hasSuffix("monsoon: cannot open libcurl: \(libraries)/libcurl.so.4: file too short; install or upgrade it: apt-get install libcurl4\n"), "\(worker.output)")
        let jobs = try await onThread {
            try PostgresConnection(world.url).execute("SELECT state, attempts FROM monsoon_jobs").rows.map { (try $0.string(0) ?? "", try $0.int(1) ?? -1) }
        }
        #expect(!jobs.isEmpty && jobs.allSatisfy { $0 == ("available", 0) }, "\(jobs)")
    }

    /// 300 episodes over 20 feeds on 4 hosts (2 connections each), 3 workers killed with SIGKILL
    /// at random at least 10 times and started again: every file byte-exact, each episode in the
    /// ledger once, no host ever over its limit, and at most 1.2 times the payload sent.
    @Test(.enabled(if: Soak.isOn, "a chaos run: make soak runs it")) func workersKilledAtRandomLoseNothingAndRecordNothingTwice() async throws {
        let (world, feeds) = try await Self.feedWorld(hosts: 4, feedsPerHost: 5, episodesPerFeed: 15)
        defer { world.stop() }
        let base = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }   // a leftover folder in /tmp harms nothing
        let folder = base + "/archive"
        // Two archives of the same feeds at once: one refresh per feed, one download per episode.
        let archives = (0..<2).map { index in
            WorkerProcess(name: "archive\(index)", arguments: ["archive", "--db", world.url, "--quiet"] + feeds.map(\.absoluteString), log: base + "/archive\(index).log")
        }
        for archive in archives { try archive.start() }
        for archive in archives { #expect(try await archive.wait() == 0, "\(archive.output)") }
        let workers = ["w1", "w2", "w3"].map { Self.worker($0, world, folder: folder) }
        // A failing test must leave no worker behind (it would retry its gone database for ever).
        defer { for worker in workers { worker.kill9() } }
        for worker in workers { try worker.start() }
        var kills = 0
        var generator = SystemRandomNumberGenerator()
        let deadline = Date().addingTimeInterval(240)
        while try await Self.ledger(world.url).completed < world.files.count + feeds.count {
            guard Date() < deadline else {
                throw PostgresTestError("not done in time: \(try await Self.ledger(world.url)); \(workers.map(\.output).joined(separator: "\n"))")
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...900, using: &generator)))
            guard kills < 14 else { continue }
            let victim = workers[Int.random(in: 0..<workers.count, using: &generator)]
            victim.kill9()
            kills += 1
            try await Task.sleep(for: .milliseconds(100))
            try victim.start()
        }
        for worker in workers {
            let status = try await worker.stop()
            #expect(status == 130, "\(worker.name) ended with \(status):\n\(worker.output)")
        }
        #expect(kills >= 10)
        let jobs = try await onThread {
            try PostgresConnection(world.url).execute("SELECT kind, count(*) FROM monsoon_jobs GROUP BY kind ORDER BY kind").rows.map { [try $0.string(0) ?? "", "\(try $0.int(1) ?? -1)"] }
        }
        #expect(jobs == [["download", "\(world.files.count)"], ["refresh", "\(feeds.count)"]])
        try await Self.expectLedgerMatches(world, folder: folder)
        for server in world.servers {
            #expect(server.maxConcurrentRequests <= 2, "a host saw \(server.maxConcurrentRequests) requests at once")
        }
        let sent = world.servers.reduce(0) { $0 + $1.bodyBytesSent }   // the feeds' few kilobytes included
        print("cluster crash test: \(kills) kills, \(sent) bytes sent for \(world.payload) (×\(String(format: "%.3f", Double(sent) / Double(world.payload)))), most at once per host: \(world.servers.map(\.maxConcurrentRequests))")
        #expect(Double(sent) <= 1.2 * Double(world.payload), "sent \(sent) bytes for a payload of \(world.payload)")
    }

    /// A worker paused (SIGSTOP) past its lease while it downloads, then resumed (SIGCONT) after
    /// another worker has completed its job: the stale worker's renewal and commit change
    /// nothing, its part goes, and the file is published once, by the other.
    @Test(.enabled(if: Soak.isOn, "a chaos run: make soak runs it")) func aWorkerPausedPastItsLeaseChangesNothingWhenItWakes() async throws {
        // Slow enough that each transfer runs for two seconds: a small file's body is kept in
        // memory for its first second (`WholeFile`), then goes to its part.
        let world = try await Self.world(hosts: 1, feedsPerHost: 1, episodesPerFeed: 2, throttle: 80_000)
        defer { world.stop() }
        let base = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }   // a leftover folder in /tmp harms nothing
        let folder = base + "/archive"
        let stale = Self.worker("stale", world, folder: folder, lease: 4)
        defer { stale.kill9() }
        try stale.start()
        // Paused once its parts hold bytes: mid-transfer.
        let deadline = Date().addingTimeInterval(30)
        while ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/.monsoon-work")) ?? []).filter({ $0.hasSuffix(".part") }).count < 2 {   // no folder yet: nothing
            guard Date() < deadline else { throw PostgresTestError("the worker started no download:\n\(stale.output)") }
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(300))
        stale.signal(SIGSTOP)
        let other = Self.worker("other", world, folder: folder, lease: 4)
        defer { other.kill9() }
        try other.start()
        while try await Self.ledger(world.url).completed < 2 {
            guard Date() < deadline.addingTimeInterval(60) else { throw PostgresTestError("the other worker did not finish:\n\(other.output)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        let published = try FileManager.default.attributesOfItem(atPath: folder + "/Feed 0-0/e0.mp3")[.systemFileNumber] as? Int
        stale.signal(SIGCONT)
        // Its next renewal (within a quarter of its lease and a tick) finds both leases gone.
        let woke = Date().addingTimeInterval(20)
        while !stale.output.contains("lost job") {
            guard Date() < woke else { throw PostgresTestError("the stale worker never saw its leases lost:\n\(stale.output)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await stale.stop() == 130)
        #expect(try await other.stop() == 130)
        let ledger = try await onThread {
            try PostgresConnection(world.url).execute("SELECT worker FROM monsoon_ledger").rows.map { try $0.string(0) }
        }
        #expect(ledger == ["other", "other"], "only the worker holding the leases recorded the files")
        #expect(ClusterWorkerTests.files(under: folder) == world.files)
        #expect(try FileManager.default.attributesOfItem(atPath: folder + "/Feed 0-0/e0.mp3")[.systemFileNumber] as? Int == published, "published once, never replaced")
        let parts = ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/.monsoon-work")) ?? []).filter { $0.contains(".part") }   // no folder: no parts
        #expect(parts.isEmpty, "the stale worker's parts are gone: \(parts)")
    }

    /// PostgreSQL restarted (`pg_ctl restart -m immediate`) in the middle of a run, with jobs
    /// completed, others queued and transfers under way: the workers connect again and every job
    /// completes exactly once.
    @Test func aDatabaseRestartLosesNothingAndDoublesNothing() async throws {
        // The first feed's last episode on each host is held part-way until the server is back:
        // transfers in flight across the restart.
        let gate = Gate()
        defer { gate.open() }
        let world = try await Self.world(hosts: 2, feedsPerHost: 2, episodesPerFeed: 10, throttle: nil, held: ["/f0/e9.mp3"], gate: gate, gateAfter: 50_000)
        defer { world.stop() }
        let base = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }   // a leftover folder in /tmp harms nothing
        let folder = base + "/archive"
        let workers = ["r1", "r2"].map { Self.worker($0, world, folder: folder) }
        // A failing test must leave no worker behind (it would retry its gone database for ever).
        defer { for worker in workers { worker.kill9() } }
        for worker in workers { try worker.start() }
        let deadline = Date().addingTimeInterval(120)
        while try await Self.ledger(world.url).completed < 8 || !world.servers.allSatisfy({ $0.requests(for: "/f0/e9.mp3").contains { $0.method == "GET" } }) {
            guard Date() < deadline else { throw PostgresTestError("no progress before the restart: \(try await Self.ledger(world.url))") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let postgres = try temporaryPostgres()
        try await onThread { try postgres.restart(immediate: true) }
        gate.open()
        while try await Self.ledger(world.url).completed < world.files.count {
            guard Date() < deadline else {
                // The jobs left, with why: what a failure here needs first.
                let left = try await onThread { try PostgresConnection(world.url).execute("SELECT state, attempts, leased_by, last_error FROM monsoon_jobs WHERE state <> 'completed'").rows.map(\.values) }
                throw PostgresTestError("not done after the restart: \(try await Self.ledger(world.url)); \(left) \(workers.map(\.output).joined(separator: "\n"))")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        for worker in workers { #expect(try await worker.stop() == 130) }
        let ledger = try await Self.ledger(world.url)
        #expect(ledger.rows == world.files.count && ledger.jobs == world.files.count)
        #expect(ClusterWorkerTests.files(under: folder) == world.files)
        #expect(workers.contains { $0.output.contains("the database is back") }, "\(workers.map(\.output))")
    }

    /// A job that kills every worker that takes it (here: the test kills whoever holds it, at
    /// once): each claim counts an attempt, so once its attempts are spent it ends dead, and
    /// every other job still completes.
    @Test func aPoisonJobEndsDeadAndTheRestFinish() async throws {
        let world = try await Self.world(hosts: 2, feedsPerHost: 1, episodesPerFeed: 6, throttle: nil)
        defer { world.stop() }
        let poisonURL = world.servers[0].url("/f0/e0.mp3").absoluteString
        // Held part-way for good: it never finishes before the test kills its worker.
        let gate = Gate()
        defer { gate.open() }
        world.servers[0].setRoute("/f0/e0.mp3", Route(body: .pattern(size: 1 << 20, seed: 99), contentType: "audio/mpeg", gate: gate, gateAfter: 100_000))
        let base = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }   // a leftover folder in /tmp harms nothing
        let folder = base + "/archive"
        let workers = ["p1", "p2"].map { Self.worker($0, world, folder: folder, lease: 6) }
        // A failing test must leave no worker behind (it would retry its gone database for ever).
        defer { for worker in workers { worker.kill9() } }
        for worker in workers { try worker.start() }
        var kills = 0
        var killedTokens: Set<Int64> = []
        let deadline = Date().addingTimeInterval(180)
        let connection = try await onThread { try PostgresConnection(world.url) }
        while true {
            let (state, holder, token, others) = try await onThread { () throws -> (String?, String?, Int64?, Int?) in
                let poison = try connection.execute("""
                    SELECT j.state, j.leased_by, j.lease_token FROM monsoon_jobs j JOIN monsoon_episodes e ON e.id = j.episode_id WHERE e.enclosure_url = $1
                    """, [poisonURL]).first
                let others = try connection.execute("""
                    SELECT count(*) FROM monsoon_jobs j JOIN monsoon_episodes e ON e.id = j.episode_id WHERE e.enclosure_url <> $1 AND j.state <> 'completed'
                    """, [poisonURL]).first?.int(0)
                return (try poison?.string(0), try poison?.string(1), try poison?.int64(2), others)
            }
            if state == "dead" && others == 0 { break }
            guard Date() < deadline else { throw PostgresTestError("poison job \(state ?? "?"), \(others ?? -1) others left after \(kills) kills") }
            // Once per claim: the process started again holds nothing until it claims anew.
            if state == "running", let holder, let token, !killedTokens.contains(token), let victim = workers.first(where: { $0.name == holder }) {
                killedTokens.insert(token)
                victim.kill9()
                kills += 1
                try victim.start()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        for worker in workers { #expect(try await worker.stop() == 130) }
        #expect(kills == 5, "one death per attempt (5 by default), then never claimed again")
        let attempts = try await onThread {
            try PostgresConnection(world.url).execute("SELECT attempts, last_error FROM monsoon_jobs WHERE state = 'dead'").rows.map { try $0.int(0) }
        }
        #expect(attempts == [5])
        #expect(ClusterWorkerTests.files(under: folder).count == world.files.count - 1)
    }

    /// The database unreachable for longer than a lease: every worker stops its transfers (it
    /// fences itself: its late completions would be refused), and once the database is back the
    /// jobs run again and each completes exactly once.
    @Test(.enabled(if: Soak.isOn, "a chaos run: make soak runs it")) func aDatabaseAwayLongerThanALeaseFencesTheWorkers() async throws {
        let world = try await Self.world(hosts: 2, feedsPerHost: 1, episodesPerFeed: 12, throttle: 150_000)
        defer { world.stop() }
        let base = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }   // a leftover folder in /tmp harms nothing
        let folder = base + "/archive"
        let workers = ["d1", "d2"].map { Self.worker($0, world, folder: folder, lease: 4) }
        // A failing test must leave no worker behind (it would retry its gone database for ever).
        defer { for worker in workers { worker.kill9() } }
        for worker in workers { try worker.start() }
        let deadline = Date().addingTimeInterval(120)
        while try await Self.ledger(world.url).completed < 2 {
            guard Date() < deadline else { throw PostgresTestError("no progress before the database went away") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let postgres = try temporaryPostgres()
        try await onThread { try postgres.stopServer() }
        // Twice the lease: every worker has fenced itself by then.
        try await Task.sleep(for: .seconds(8))
        try await onThread { try postgres.startServer() }
        while try await Self.ledger(world.url).completed < world.files.count {
            guard Date() < deadline else {
                throw PostgresTestError("not done after the database came back: \(try await Self.ledger(world.url)); \(workers.map(\.output).joined(separator: "\n"))")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        for worker in workers { #expect(try await worker.stop() == 130) }
        // A worker with transfers under way fences itself; one whose transfers had all finished
        // keeps its files until the database is back.
        #expect(workers.allSatisfy { $0.output.contains("lost the database") }, "\(workers.map(\.output))")
        let ledger = try await Self.ledger(world.url)
        #expect(ledger.rows == world.files.count && ledger.jobs == world.files.count)
        #expect(ClusterWorkerTests.files(under: folder) == world.files)
    }

    /// The database away for longer than three quarters of a lease, while two downloads finish
    /// and a third is under way: the finished files are put in place and recorded once it is back
    /// (their jobs are still the worker's by their tokens), never fetched again; the stopped one
    /// keeps its part, and its next attempt asks for the rest only.
    @Test func finishedWorkSurvivesADatabaseAwayPastTheFence() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, bodies) = try await ClusterWorkerTests.catalogue(server, episodes: 3, size: 200_000)
        let gate = Gate()
        for index in 0..<2 {
            server.setRoute("/e/\(index).mp3", Route(body: Body.pattern(size: 200_000 + index * 1000, seed: UInt64(index + 1)), contentType: "audio/mpeg",
                                                     gate: gate))
        }
        // Larger than a body held in memory before its part exists (`Transfer.earlyLimit`).
        let third = Body.pattern(size: 4 << 20, seed: 3)
        server.setRoute("/e/2.mp3", Route(body: third, contentType: "audio/mpeg", etag: "\"v3\"", faults: [.stallAfter(bytes: 1 << 20, seconds: 60, times: 1)]))
        // The host is known not to redirect (no look before each download, which would take the
        // faults), and takes the three downloads at once.
        try await onThread {
            let queue = JobQueue(connection: try PostgresConnection(url), worker: "test")
            let host = try #require(ClusterHost.key(of: server.url("/")))
            try queue.noteRedirects(of: host, false)
            try ClusterAdmin(connection: queue.connection).setLimits(host: host, maxConnections: 4, minIntervalMilliseconds: nil)
        }
        let folder = try Self.temporaryFolder() + "/archive"
        defer { try? FileManager.default.removeItem(atPath: folder + "/..") }   // a leftover folder in /tmp harms nothing
        var configuration = ClusterWorkerTests.configuration(url, folder: folder, name: "o1")
        configuration.leaseSeconds = 1
        let said = Mutex<[String]>([])
        configuration.report = { line in said.withLock { $0.append(line) } }
        let worker = ClusterWorker(configuration: configuration)
        let run = Task { try await worker.run() }
        defer { gate.open(); worker.stop() }   // a failing test leaves no worker running
        let part = folder + "/.monsoon-work"
        try await waitUntil("the third download's part holds its first MiB") {
            server.requests(for: "/e/0.mp3").count == 1 && server.requests(for: "/e/1.mp3").count == 1
                && ((try? FileManager.default.contentsOfDirectory(atPath: part)) ?? []).contains { name in
                    name.hasSuffix(".part") && (try? FileManager.default.attributesOfItem(atPath: part + "/" + name)[.size] as? Int) == 1 << 20
                }
        }
        let postgres = try temporaryPostgres()
        try await onThread { try postgres.stopServer() }
        gate.open()
        try await waitUntil("the worker fenced itself") { said.withLock { $0.contains { $0.contains("could not renew its leases") } } }
        #expect(said.withLock { $0.contains { $0.contains("stopped its 1 transfers, their parts kept for whoever runs the jobs; 2 finished files wait for the database") } },
                "\(said.withLock { $0 })")
        try await onThread { try postgres.startServer() }
        try await ClusterWorkerTests.waitForJobs(url, in: ["completed"])
        worker.stop()
        _ = try await run.value
        var expected = bodies
        expected["Show/episode 2.mp3"] = third.sha256Hex()
        #expect(ClusterWorkerTests.files(under: folder) == expected)
        #expect(server.requests(for: "/e/0.mp3").count == 1 && server.requests(for: "/e/1.mp3").count == 1, "the finished files were never fetched again")
        #expect(server.requests(for: "/e/2.mp3").map { $0.header("Range") } == [nil, "bytes=\(1 << 20)-"], "the stopped one resumed from its part")
        let ledger = await ClusterCommandTests.monsoon(["verify", "--db", url, folder])
        #expect(ledger.status == 0, "\(ledger)")
    }

    /// A worker that starts while the database is away waits for it, says so, and tries again
    /// (quickly here), instead of exiting; once it is back, it works.
    @Test func aWorkerStartedWithTheDatabaseAwayWaitsForIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, bodies) = try await ClusterWorkerTests.catalogue(server, episodes: 2, size: 50_000)
        let folder = try Self.temporaryFolder() + "/archive"
        defer { try? FileManager.default.removeItem(atPath: folder + "/..") }   // a leftover folder in /tmp harms nothing
        let postgres = try temporaryPostgres()
        try await onThread { try postgres.stopServer() }
        var configuration = ClusterWorkerTests.configuration(url, folder: folder, name: "late")
        configuration.startRetry = (0.05, 0.2)
        let said = Mutex<[String]>([])
        configuration.report = { line in said.withLock { $0.append(line) } }
        let worker = ClusterWorker(configuration: configuration)
        let run = Task { try await worker.run() }
        defer { worker.stop() }
        try await waitUntil("the worker said it waits") { said.withLock { $0.count >= 2 } }
        #expect(said.withLock { $0 }.allSatisfy { $0.hasPrefix("worker late: cannot connect to PostgreSQL at 127.0.0.1:\(postgres.port): ") && $0.contains("; trying again in ") })
        try await onThread { try postgres.startServer() }
        try await ClusterWorkerTests.waitForJobs(url, in: ["completed"])
        worker.stop()
        #expect(try await run.value.completed == 2, "\(said.withLock { $0 })")
        #expect(ClusterWorkerTests.files(under: folder) == bodies)
    }

    /// A worker killed (SIGKILL) in the middle of a download: once its lease is taken back,
    /// another worker takes its part over from the shared work folder and asks for the rest only.
    @Test func aKilledWorkersPartIsTakenOverAndResumed() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, _) = try await ClusterWorkerTests.catalogue(server, episodes: 1)
        let body = Body.pattern(size: 4 << 20, seed: 21)
        server.setRoute("/e/0.mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"k\"", faults: [.stallAfter(bytes: 1 << 20, seconds: 60, times: 1)]))
        let host = try #require(ClusterHost.key(of: server.url("/")))
        try await onThread { try JobQueue(connection: PostgresConnection(url), worker: "test").noteRedirects(of: host, false) }
        let base = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }   // a leftover folder in /tmp harms nothing
        let folder = base + "/archive"
        let doomed = WorkerProcess(name: "doomed", arguments: ["worker", "--db", url, "-o", folder, "--name", "doomed", "--lease", "60"], log: base + "/doomed.log")
        try doomed.start()
        defer { doomed.kill9() }
        try await waitUntil("the part holds its first MiB") {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/.monsoon-work")) ?? []).contains { name in
                name.hasSuffix(".part") && (try? FileManager.default.attributesOfItem(atPath: folder + "/.monsoon-work/" + name)[.size] as? Int) == 1 << 20
            }
        }
        doomed.kill9()
        // Its lease runs out (here at once): taken back, and due again.
        try await onThread {
            let connection = try PostgresConnection(url)
            try connection.execute("UPDATE monsoon_jobs SET lease_expires_at = now() - interval '1 second' WHERE state = 'running'")
            #expect(try JobQueue(connection: connection, worker: "test").reapExpiredLeases().reaped == 1)
            try connection.execute("UPDATE monsoon_jobs SET state = 'available', run_at = now() WHERE state = 'scheduled'")
        }
        let heir = ClusterWorker(configuration: ClusterWorkerTests.configuration(url, folder: folder, name: "heir"))
        let run = Task { try await heir.run() }
        defer { heir.stop() }
        try await ClusterWorkerTests.waitForJobs(url, in: ["completed"])
        heir.stop()
        let summary = try await run.value
        #expect(summary.completed == 1 && summary.adoptedBytes == 1 << 20)
        #expect(server.requests(for: "/e/0.mp3").map { $0.header("Range") } == [nil, "bytes=\(1 << 20)-"])
        #expect(ClusterWorkerTests.files(under: folder) == ["Show/episode 0.mp3": body.sha256Hex()])
    }
}
