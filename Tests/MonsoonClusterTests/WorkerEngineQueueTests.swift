import Foundation
@testable import MonsoonCluster
@testable import MonsoonEngine
import MonsoonTestServer
import Testing

/// A worker's engine persists through `PostgresQueueStore`, the same queue interface a local
/// engine persists through in SQLite: its transfers are rows of its own queue while they run,
/// a restart under the same name empties what a killed process left, and a clean stop removes it.
@Suite(.temporaryPostgres) struct WorkerEngineQueueTests {
    static func rows(_ url: String, queue: String) async throws -> [(id: String, status: String, bytes: Int, filePath: String?)] {
        try await onThread {
            try PostgresConnection(url).execute("SELECT id, status, bytes, file_path FROM monsoon_engine_downloads WHERE queue = $1 ORDER BY seq", [queue])
                .rows.map { (try $0.string(0) ?? "", try $0.string(1) ?? "", try $0.int(2) ?? 0, try $0.string(3)) }
        }
    }

    @Test func aWorkersTransfersAreRowsOfItsOwnQueue() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, bodies) = try await ClusterWorkerTests.catalogue(server, episodes: 2, size: 300_000)
        for index in 0..<2 {
            // The catalogue's body again, about 6 s long each: long enough to be seen running.
            var route = Route(body: Body.pattern(size: 300_000 + index * 1000, seed: UInt64(index + 1)), contentType: "audio/mpeg")
            route.throttle = 50_000
            server.setRoute("/e/\(index).mp3", route)
        }
        let queue = PostgresQueueStore.queueName(ofWorker: "w1")
        // What a killed process of the same name left: a download whose job is no longer its own.
        try await onThread {
            let store = try PostgresQueueStore(connection: PostgresConnection(url), queue: queue)
            _ = try store.add([DownloadRequest(id: "left-behind", url: server.url("/left-behind.mp3"), destination: .directory("/nowhere"))])
        }
        #expect(try await Self.rows(url, queue: queue).map(\.id) == ["left-behind"])

        let folder = NSTemporaryDirectory() + "monsoon-worker-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let worker = ClusterWorker(configuration: ClusterWorkerTests.configuration(url, folder: folder, name: "w1"))
        let run = Task { try await worker.run() }
        defer { worker.stop() }   // a failing test leaves no worker running

        // While they run: both downloads are rows of the worker's queue, with their bytes and
        // their parts in the work folder; the row the earlier process left is gone.
        let deadline = Date().addingTimeInterval(30)
        var seen: [(id: String, status: String, bytes: Int, filePath: String?)] = []
        while Date() < deadline {
            seen = try await Self.rows(url, queue: queue)
            if seen.count == 2, seen.allSatisfy({ $0.status == "downloading" && $0.bytes > 0 }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(seen.count == 2 && seen.allSatisfy { $0.status == "downloading" && $0.bytes > 0 }, "\(seen)")
        #expect(seen.allSatisfy { $0.filePath?.hasPrefix(folder + "/.monsoon-work/") == true }, "\(seen)")
        #expect(!seen.contains { $0.id == "left-behind" })

        try await ClusterWorkerTests.waitForJobs(url, in: ["completed"])
        worker.stop()
        let summary = try await run.value
        #expect(summary.completed == 2)
        #expect(ClusterWorkerTests.files(under: folder) == bodies)
        #expect(server.requests(for: "/left-behind.mp3").isEmpty, "the earlier process's download was not started")
        // Stopped cleanly: its queue is gone with its rows.
        try await onThread {
            let connection = try PostgresConnection(url)
            #expect(try connection.execute("SELECT count(*) FROM monsoon_engine_queues WHERE queue = $1", [queue]).first?.int(0) == 0)
            #expect(try connection.execute("SELECT count(*) FROM monsoon_engine_downloads").first?.int(0) == 0)
        }
    }

    /// A worker cut off from the database longer than a lease may have been replaced by one of
    /// the same name on another node: when the first one stops, the second's row and engine
    /// queue stay.
    @Test func aReplacedWorkerStoppingLeavesItsSuccessorsQueue() async throws {
        let postgres = try temporaryPostgres()
        try await onThread {
            let url = try postgres.createDatabase()
            let connection = try PostgresConnection(url)
            _ = try ClusterSchema.migrate(connection)
            let first = JobQueue(connection: connection, worker: "w1")
            try first.register(node: "node-a")
            // Node B took the name over (this process is node A's) and keeps its engine's queue.
            try connection.execute("UPDATE monsoon_workers SET node = 'node-b', pid = 1 WHERE name = 'w1'")
            let successor = try PostgresQueueStore(connection: PostgresConnection(url), queue: PostgresQueueStore.queueName(ofWorker: "w1"))
            _ = try successor.add([DownloadRequest(id: "b1", url: URL(string: "https://example.org/b1.mp3")!, destination: .directory("/srv"))])
            try first.unregister(node: "node-a")
            #expect(try connection.execute("SELECT node, stopped_at IS NULL FROM monsoon_workers WHERE name = 'w1'").first.map { [try $0.string(0), try $0.string(1)] } == ["node-b", "t"])
            #expect(try successor.downloads().map(\.id) == ["b1"])
            // Its own stop removes it.
            try connection.execute("UPDATE monsoon_workers SET node = 'node-a', pid = $1 WHERE name = 'w1'", [Int(getpid())])
            try first.unregister(node: "node-a")
            #expect(try connection.execute("SELECT count(*) FROM monsoon_engine_queues").first?.int(0) == 0)

            // A killed worker's queue (its worker silent) goes once its silence is long enough; a
            // live worker's stays.
            let killed = JobQueue(connection: connection, worker: "killed")
            try killed.register(node: "node-a")
            let killedStore = try PostgresQueueStore(connection: PostgresConnection(url), queue: PostgresQueueStore.queueName(ofWorker: "killed"))
            let live = JobQueue(connection: connection, worker: "live")
            try live.register(node: "node-a")
            _ = try PostgresQueueStore(connection: PostgresConnection(url), queue: PostgresQueueStore.queueName(ofWorker: "live"))
            try connection.execute("UPDATE monsoon_workers SET heartbeat_at = now() - interval '2 days' WHERE name = 'killed'")
            #expect(try PostgresQueueStore.dropAbandoned(silentFor: 86_400, on: connection) == 1)
            #expect(try connection.execute("SELECT queue FROM monsoon_engine_queues").rows.map { try $0.string(0) } == ["worker:live"])
            // A worker whose queue was removed under it (cut off for a day) has it made again at
            // its next write, numbered past anything before.
            _ = try killedStore.add([DownloadRequest(id: "k1", url: URL(string: "https://example.org/k1.mp3")!, destination: .directory("/srv"))])
            #expect(try (killedStore.record(withID: "k1")?.sequence ?? 0) > 1_000_000_000_000_000)

            // Prepared statements the server lost (a transaction pooler's other session, say): the
            // transaction that found out is undone, and the store goes on without them.
            _ = try killedStore.insert(QueueStoreConformanceTests.row("k2", sequence: 0))
            try killedStore.connection.executeScript("DEALLOCATE ALL")
            #expect(throws: PostgresError.self) { _ = try killedStore.insert(QueueStoreConformanceTests.row("k3", sequence: 0)) }
            _ = try killedStore.insert(QueueStoreConformanceTests.row("k3", sequence: 0))
            #expect(try killedStore.downloads().map(\.id) == ["k1", "k2", "k3"])
        }
    }
}
