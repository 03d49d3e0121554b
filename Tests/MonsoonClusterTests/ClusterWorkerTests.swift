import Foundation
@testable import MonsoonCluster
import MonsoonEngine
import MonsoonPodcasts
import MonsoonTestServer
import Synchronization
import Testing

/// Workers against a real PostgreSQL and the loopback test server: files under their archive
/// names, byte-exact, each recorded once in the ledger, and each host's limit held by all
/// workers together.
@Suite(.temporaryPostgres) struct ClusterWorkerTests {
    /// A migrated database with one feed (folder "Show") and a download job per route of `server`.
    static func catalogue(_ server: TestServer, episodes: Int, size: Int = 200_000) async throws -> (url: String, bodies: [String: String]) {
        let postgres = try temporaryPostgres()
        var bodies: [String: String] = [:]
        for index in 0..<episodes {
            let body = Body.pattern(size: size + index * 1000, seed: UInt64(index + 1))
            server.setRoute("/e/\(index).mp3", Route(body: body, contentType: "audio/mpeg"))
            bodies["Show/episode \(index).mp3"] = body.sha256Hex()
        }
        let url = try await onThread { () throws -> String in
            let url = try postgres.createDatabase(migrated: true)
            let connection = try PostgresConnection(url)
            let feed = try #require(try connection.execute("INSERT INTO monsoon_feeds (url, folder) VALUES ($1, 'Show') RETURNING id", [server.url("/feed.xml").absoluteString]).first?.int64(0))
            var jobs: [NewJob] = []
            for index in 0..<episodes {
                let enclosure = server.url("/e/\(index).mp3")
                let episode = try #require(try connection.execute("""
                    INSERT INTO monsoon_episodes (feed_id, identity, enclosure_url, enclosure_length, file_name) VALUES ($1, $2, $3, $4, $5) RETURNING id
                    """, [feed, "guid-\(index)", enclosure.absoluteString, size + index * 1000, "episode \(index)"]).first?.int64(0))
                jobs.append(.download(episodeID: episode, feedID: feed, url: enclosure, feedURL: server.url("/feed.xml"), path: "Show/episode \(index)",
                                      expectedLength: Int64(size + index * 1000), maxBytes: nil, priority: index))
            }
            #expect(try JobQueue.enqueue(jobs, on: connection) == episodes)
            return url
        }
        return (url, bodies)
    }

    static func configuration(_ url: String, folder: String, name: String, slots: Int = 4) -> WorkerConfiguration {
        var configuration = WorkerConfiguration(database: url, folder: folder, name: name, node: "test-node")
        configuration.slots = slots
        configuration.leaseSeconds = 8
        configuration.pollSeconds = 0.2
        configuration.engine.diskReserve = 0
        return configuration
    }

    /// Waits (polling, with a generous deadline) until every job is in one of `states`.
    static func waitForJobs(_ url: String, in states: [String], seconds: Double = 60) async throws {
        try await waitInDatabase("jobs still not done", seconds: seconds, url, explain: { connection in
            "\(try connection.execute("SELECT state, count(*), max(last_error) FROM monsoon_jobs GROUP BY state").rows.map { $0.values })"
        }) { connection in
            try connection.execute("SELECT count(*) FROM monsoon_jobs WHERE NOT (state = ANY($1::text[]))", [PostgresArray(states.map(Optional.some))]).first?.int(0) == 0
        }
    }

    /// The files under `folder` and their SHA-256, the work folder and the manifests aside (a
    /// worker killed while it wrote one may leave its temporary file).
    static func files(under folder: String) -> [String: String] {
        var found: [String: String] = [:]
        let walker = FileManager.default.enumerator(atPath: folder)
        while let path = walker?.nextObject() as? String {
            var isFolder: ObjCBool = false
            guard !path.hasPrefix(".monsoon-work"), !ClusterVerifier.isManifest((path as NSString).lastPathComponent),
                  FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            found[path] = try? FileDigest.sha256(ofFile: folder + "/" + path)
        }
        return found
    }

    @Test func twoWorkersDownloadEveryEpisodeOnceWithinTheHostsLimit() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, bodies) = try await Self.catalogue(server, episodes: 12)
        let folder = NSTemporaryDirectory() + "monsoon-worker-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let workers = [ClusterWorker(configuration: Self.configuration(url, folder: folder, name: "w1")),
                       ClusterWorker(configuration: Self.configuration(url, folder: folder, name: "w2"))]
        let runs = workers.map { worker in Task { try await worker.run() } }
        defer { for worker in workers { worker.stop() } }   // a failing test leaves no worker running
        try await Self.waitForJobs(url, in: ["completed"])
        for worker in workers { worker.stop() }
        var completed = 0
        for run in runs { completed += try await run.value.completed }
        #expect(completed == 12)
        #expect(Self.files(under: folder) == bodies, "every file byte-exact under its archive name, and nothing else")
        // The workers wrote the folder's manifest from the ledger as they stopped: `verify` finds it all as listed.
        let manifest = try Manifest.read(in: folder + "/Show")
        #expect(Dictionary(uniqueKeysWithValues: manifest.files.map { ("Show/" + $0.file, $0.sha256) }) == bodies)
        #expect(Set(manifest.files.compactMap(\.worker)).isSubset(of: ["w1", "w2"]) && Set(manifest.files.compactMap(\.node)) == ["test-node"])
        let verify = await ClusterCommandTests.monsoon(["verify", folder])
        #expect(verify.status == 0 && verify.errors == "monsoon: verified 12 files in 1 folder: all as listed\n", "\(verify)")
        let ledger = await ClusterCommandTests.monsoon(["verify", "--db", url, folder])
        #expect(ledger.status == 0 && ledger.errors == "monsoon: verified 12 files in 1 folder: all as listed\n", "\(ledger)")
        #expect(server.maxConcurrentRequests <= 2, "the host's limit (2 by default) held across both workers")
        #expect(server.bodyBytesSent == bodies.keys.count * 200_000 + (0..<12).reduce(0) { $0 + $1 * 1000 }, "every byte sent once")
        try await onThread {
            let connection = try PostgresConnection(url)
            let ledger = try connection.execute("SELECT path, sha256, worker, node FROM monsoon_ledger ORDER BY path")
            #expect(ledger.count == 12)
            #expect(Dictionary(uniqueKeysWithValues: try ledger.rows.map { (try $0.string(0) ?? "", try $0.string(1) ?? "") }) == bodies)
            #expect(try Set(ledger.rows.map { try $0.string(3) }) == ["test-node"])
            #expect(try connection.execute("SELECT count(*) FROM monsoon_workers WHERE stopped_at IS NOT NULL").first?.int(0) == 2)
            #expect(try connection.execute("SELECT sum(running) FROM monsoon_hosts").first?.int(0) == 0)
        }
    }

    /// A worker that discards what it downloads (`worker --discard`) completes each job once and
    /// records each body's SHA-256 in the ledger, with no file left behind.
    @Test func aDiscardingWorkerRecordsEachDownloadOnceAndKeepsNoFile() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, bodies) = try await Self.catalogue(server, episodes: 6)
        let folder = NSTemporaryDirectory() + "monsoon-worker-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        var configuration = Self.configuration(url, folder: folder, name: "w1")
        configuration.discard = true
        let worker = ClusterWorker(configuration: configuration)
        let run = Task { try await worker.run() }
        defer { worker.stop() }   // a failing test leaves no worker running
        try await Self.waitForJobs(url, in: ["completed"])
        worker.stop()
        #expect(try await run.value.completed == 6)
        #expect(Self.files(under: folder).isEmpty, "nothing kept")
        #expect(server.bodyBytesSent == 6 * 200_000 + (0..<6).reduce(0) { $0 + $1 * 1000 }, "every byte sent once")
        try await onThread {
            let connection = try PostgresConnection(url)
            let ledger = try connection.execute("SELECT path, sha256 FROM monsoon_ledger ORDER BY path")
            #expect(try ledger.rows.map { try $0.string(1) ?? "" }.sorted() == bodies.values.sorted())
            #expect(try connection.execute("SELECT sum(running) FROM monsoon_hosts").first?.int(0) == 0)
        }
    }

    /// A manifest that cannot be written (a folder stands at its name) is reported, and tried
    /// again until the worker stops; no job waits for it or fails for it.
    @Test func aManifestThatCannotBeWrittenFailsNoJob() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, bodies) = try await Self.catalogue(server, episodes: 2)
        let folder = NSTemporaryDirectory() + "monsoon-worker-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        try FileManager.default.createDirectory(atPath: folder + "/Show/" + Manifest.fileName, withIntermediateDirectories: true)
        let reports = Reports()
        var configuration = Self.configuration(url, folder: folder, name: "w1")
        configuration.report = { line in reports.lines.withLock { $0.append(line) } }
        let worker = ClusterWorker(configuration: configuration)
        let run = Task { try await worker.run() }
        defer { worker.stop() }   // a failing test leaves no worker running
        try await Self.waitForJobs(url, in: ["completed"])
        worker.stop()
        let summary = try await run.value
        #expect(summary.completed == 2 && summary.failed == 0)
        #expect(Self.files(under: folder) == bodies)
        let lines = reports.lines.withLock { $0 }
        #expect(lines.contains { $0.hasPrefix("worker w1: cannot write \(folder)/Show/\(Manifest.fileName): ") }, "\(lines)")
        #expect(lines.last == "worker w1: stopped without the manifest of 1 feed; each is written when a worker next records a download of its feed", "\(lines)")
    }

    /// A file the server refuses (404) ends its job failed, with the reason; the others complete.
    @Test func aMissingFileFailsItsJobOnly() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, _) = try await Self.catalogue(server, episodes: 3)
        server.setRoute("/e/1.mp3", .html(status: 404, "gone"))
        let folder = NSTemporaryDirectory() + "monsoon-worker-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let worker = ClusterWorker(configuration: Self.configuration(url, folder: folder, name: "w1"))
        let run = Task { try await worker.run() }
        defer { worker.stop() }   // a failing test leaves no worker running
        try await Self.waitForJobs(url, in: ["completed", "failed"])
        worker.stop()
        let summary = try await run.value
        #expect(summary.completed == 2 && summary.failed == 1)
        try await onThread {
            let connection = try PostgresConnection(url)
            let failed = try #require(try connection.execute("SELECT last_error FROM monsoon_jobs WHERE state = 'failed'").first)
            #expect(try failed.string(0)?.contains("404") == true)
        }
        #expect(Self.files(under: folder).count == 2)
    }

    /// Two tracking redirectors in front of a CDN that allows one connection at once: workers
    /// follow each hop with a HEAD that follows no redirect, taking a connection on each new host
    /// under its row lock before asking it, so the CDN never sees two at once, even for the first
    /// downloads, before anything was learned.
    @Test func theHostARedirectLeadsToKeepsItsLimitFromTheFirstDownload() async throws {
        let redirector = try TestServer()
        let tracker = try TestServer()
        let cdn = try TestServer()
        defer { redirector.stop(); tracker.stop(); cdn.stop() }
        let (url, bodies) = try await Self.catalogue(redirector, episodes: 10)
        // Two hops: the feed's redirector, then a tracker, then the CDN.
        for index in 0..<10 {
            let body = Body.pattern(size: 200_000 + index * 1000, seed: UInt64(index + 1))
            cdn.setRoute("/e/\(index).mp3", Route(body: body, contentType: "audio/mpeg", throttle: 2 << 20))
            tracker.setRoute("/t/\(index).mp3", Route(body: .bytes([]), faults: [.redirect(to: cdn.url("/e/\(index).mp3").absoluteString)]))
            redirector.setRoute("/e/\(index).mp3", Route(body: .bytes([]), faults: [.redirect(to: tracker.url("/t/\(index).mp3").absoluteString)]))
        }
        let cdnHost = try #require(ClusterHost.key(of: cdn.url("/")))
        try await onThread {
            let queue = JobQueue(connection: try PostgresConnection(url), worker: "setup")
            try ClusterAdmin(connection: queue.connection).setLimits(host: cdnHost, maxConnections: 1, minIntervalMilliseconds: nil)
        }
        let folder = NSTemporaryDirectory() + "monsoon-worker-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let workers = ["r1", "r2", "r3"].map { ClusterWorker(configuration: Self.configuration(url, folder: folder, name: $0)) }
        let runs = workers.map { worker in Task { try await worker.run() } }
        defer { for worker in workers { worker.stop() } }   // a failing test leaves no worker running
        try await Self.waitForJobs(url, in: ["completed"])
        for worker in workers { worker.stop() }
        for run in runs { _ = try await run.value }
        #expect(Self.files(under: folder) == bodies)
        #expect(cdn.maxConcurrentRequests == 1, "the CDN's limit held across the workers from the first download")
        #expect(redirector.maxConcurrentRequests <= 2)
        #expect(tracker.maxConcurrentRequests <= 2)
        // Each file fetched once, from the CDN (a job sent back for want of room there had asked
        // the redirectors only, and asks them again when claimed anew).
        #expect(Dictionary(grouping: cdn.requests.filter { $0.method == "GET" }, by: \.path).values.allSatisfy { $0.count == 1 } && cdn.requests.filter { $0.method == "GET" }.count == 10)
        try await onThread {
            let connection = try PostgresConnection(url)
            #expect(try connection.execute("SELECT count(*) FROM monsoon_jobs WHERE answered_host = $1", [cdnHost]).first?.int(0) == 10)
            #expect(try connection.execute("SELECT redirects FROM monsoon_hosts WHERE host = $1", [ClusterHost.key(of: redirector.url("/")) ?? ""]).first?.bool(0) == true)
        }
    }
}

/// What a worker reported, one line each.
final class Reports: Sendable {
    let lines = Mutex<[String]>([])
}
