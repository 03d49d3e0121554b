import Foundation
@testable import MonsoonCluster
@testable import MonsoonEngine
import MonsoonTestServer
import Testing

/// An engine whose queue is in PostgreSQL while the server crashes or stops: serialized, since
/// each test stops the suite's server, which the others' would find away.
@Suite(.serialized, .temporaryPostgres) struct EngineQueueOutageTests {
    /// An engine on a queue in a new database of the suite's server, `count` throttled files
    /// on the test server to download into a folder of its own.
    struct Fixture {
        let server: TestServer
        let postgres: TemporaryPostgres
        let database: String
        let folder: String
        let bodies: [String: String]
        let manager: DownloadManager
        let completions: Task<Set<DownloadID>, Never>

        init(count: Int, size: Int, throttle: Int, configure: (inout EngineConfiguration) -> Void) async throws {
            server = try TestServer()
            var bodies: [String: String] = [:]
            for index in 0..<count {
                let body = Body.pattern(size: size + index * 1000, seed: UInt64(index + 1))
                var route = Route(body: body, contentType: "audio/mpeg")
                route.throttle = throttle
                server.setRoute("/e/\(index).mp3", route)
                bodies["e\(index).mp3"] = body.sha256Hex()
            }
            self.bodies = bodies
            let postgres = try temporaryPostgres()
            self.postgres = postgres
            database = try await onThread { () throws -> String in
                let url = try postgres.createDatabase()
                _ = try ClusterSchema.migrate(PostgresConnection(url))
                return url
            }
            folder = NSTemporaryDirectory() + "monsoon-engine-pg-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let database = database
            let store = try await onThread { try PostgresQueueStore(connection: PostgresConnection(database), queue: "engine") }
            var configuration = EngineConfiguration()
            configuration.diskReserve = 0
            configure(&configuration)
            manager = DownloadManager(configuration: configuration, store: store)
            let events = manager.events([.statusChanged])
            completions = Task {
                var done = Set<DownloadID>()
                for await event in events {
                    if case .statusChanged(let download) = event, download.status == .completed { done.insert(download.id) }
                    if done.count == count { break }
                }
                return done
            }
            for index in 0..<count {
                try await manager.enqueue(DownloadRequest(id: DownloadID("e\(index)"), url: server.url("/e/\(index).mp3"), destination: .file(folder + "/e\(index).mp3")))
            }
        }

        /// The downloads that completed, once all have or after `seconds`.
        func completed(within seconds: Int) async -> Set<DownloadID> {
            let completions = completions
            let timeout = Task {
                try await Task.sleep(for: .seconds(seconds))
                completions.cancel()
            }
            defer { timeout.cancel() }
            return await completions.value
        }

        /// Each file's SHA-256 ("missing" for none), by name.
        func files() -> [String: String] {
            Dictionary(uniqueKeysWithValues: bodies.keys.map { ($0, (try? FileDigest.sha256(ofFile: folder + "/" + $0)) ?? "missing") })
        }

        /// What the engine says of each download, for a failure's message.
        func states() async -> [String] {
            var states: [String] = []
            for index in 0..<bodies.count {
                let download = try? await manager.download(withID: DownloadID("e\(index)"))   // unreadable is what this reports
                states.append("e\(index): \(download.map { "\($0.status) \($0.lastError?.message ?? "")" } ?? "unreadable")")
            }
            return states
        }

        func stop() async {
            _ = await manager.shutdown()
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)   // a leftover folder in /tmp harms nothing
        }
    }

    /// Downloads starting and running while the server restarts as after a crash: every
    /// download completes, byte-exact.
    @Test func anEngineOnAPostgresQueueFinishesEveryDownloadAcrossARestart() async throws {
        let fixture = try await Fixture(count: 12, size: 200_000, throttle: 200_000) { configuration in
            configuration.maxConcurrentDownloads = 4
            configuration.retry = RetryPolicy(maxRetries: 20, baseDelay: 0.2, maxDelay: 1, jitter: 0.1)
        }
        try await Task.sleep(for: .milliseconds(1500))
        try await onThread { try fixture.postgres.restart(immediate: true) }
        let done = await fixture.completed(within: 90)
        let states = await fixture.states()
        #expect(done.count == 12, "completed: \(done.sorted()); \(states)")
        #expect(fixture.files() == fixture.bodies)
        await fixture.stop()
    }

    /// Downloads that could not start while the queue's database was away (their starts failed
    /// with it, and their host was held a moment) start once it is back, with nothing else
    /// happening to wake the engine: the end of a hold schedules what it held.
    @Test func downloadsThatCouldNotStartWhileTheDatabaseWasAwayStartOnceItIsBack() async throws {
        // One at a time: the others' starts come while the database is away.
        let fixture = try await Fixture(count: 3, size: 100_000, throttle: 100_000) { $0.maxConcurrentDownloads = 1 }
        try await onThread {
            // The test's server flushes no commit of a session that does not ask (the schema's):
            // they go to disk before it stops as if it crashed.
            try PostgresConnection(fixture.database).execute("CHECKPOINT")
            try fixture.postgres.stopServer()
        }
        try await Task.sleep(for: .seconds(3))   // the first finishes meanwhile, and the next starts fail
        // The second could not start while the database was away: its row's save failed.
        #expect(fixture.server.requests(for: "/e/1.mp3").isEmpty && fixture.server.requests(for: "/e/2.mp3").isEmpty)
        #expect(fixture.server.requests(for: "/e/0.mp3").count == 1)
        try await onThread { try fixture.postgres.startServer() }
        let done = await fixture.completed(within: 60)
        let states = await fixture.states()
        #expect(done.count == 3, "completed: \(done.sorted()); \(states)")
        #expect(fixture.files() == fixture.bodies)
        await fixture.stop()
    }
}
