import Foundation
@testable import MonsoonCluster
@testable import MonsoonEngine
import Synchronization
import Testing

/// One implementation of `QueueStore` for the conformance suite: it opens a new, empty queue
/// and, for the tests of several processes, more connections to that same queue.
///
/// Every test of `QueueStoreConformanceTests` runs against each one in `all`: SQLite's
/// `DownloadStore` and PostgreSQL's `PostgresQueueStore` (on the suite's own server).
struct QueueStoreImplementation: Sendable, CustomTestStringConvertible {
    /// An empty queue: its first connection, a way to open more, and its clean-up.
    struct Queue {
        let store: any QueueStore
        let connect: @Sendable () throws -> any QueueStore
        let remove: @Sendable () -> Void
    }

    let name: String
    let open: @Sendable () throws -> Queue

    var testDescription: String { name }

    /// The implementations under test.
    static let all: [QueueStoreImplementation] = [.sqlite, .postgres]

    /// `DownloadStore`: a SQLite file in a fresh temporary folder.
    static let sqlite = QueueStoreImplementation(name: "SQLite") {
        let folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/queue.sqlite"
        // The folder is the test's own: a failure to remove it leaves a few KiB in /tmp, nothing a test reads.
        return Queue(store: try DownloadStore(path: path), connect: { try DownloadStore(path: path) },
                     remove: { try? FileManager.default.removeItem(atPath: folder) })
    }

    /// `PostgresQueueStore`: a queue of its own name in one migrated database of the suite's
    /// server (so the queues of the suite's tests share tables, as workers' queues do).
    static let postgres = QueueStoreImplementation(name: "PostgreSQL") {
        let url = try database()
        let name = "test-" + UUID().uuidString.prefix(8).lowercased()
        return Queue(store: try PostgresQueueStore(connection: PostgresConnection(url), queue: name),
                     connect: { try PostgresQueueStore(connection: PostgresConnection(url), queue: name) },
                     remove: {
                         // Other tests use other queues: one left behind changes none of them.
                         _ = try? PostgresConnection(url).execute("DELETE FROM monsoon_engine_queues WHERE queue = $1", [name])
                     })
    }

    /// The suite's database, made and migrated by the first test that needs it.
    private static func database() throws -> String {
        let server = try temporaryPostgres()
        return try databases.withLock { made in
            if let url = made[server.url()] { return url }
            let url = try server.createDatabase()
            _ = try ClusterSchema.migrate(PostgresConnection(url))
            made[server.url()] = url
            return url
        }
    }

    private static let databases = Mutex<[String: String]>([:])
}
