import Foundation
@testable import MonsoonEngine
import Testing

/// One implementation of `QueueStore` for the conformance suite: it opens a new, empty queue
/// and, for the tests of several processes, more connections to that same queue.
///
/// Every test of `QueueStoreConformanceTests` runs against each one in `all`: SQLite's
/// `DownloadStore`, the one a queue on disk has.
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
    static let all: [QueueStoreImplementation] = [.sqlite]

    /// `DownloadStore`: a SQLite file in a fresh temporary folder.
    static let sqlite = QueueStoreImplementation(name: "SQLite") {
        let folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/queue.sqlite"
        // The folder is the test's own: a failure to remove it leaves a few KiB in /tmp, nothing a test reads.
        return Queue(store: try DownloadStore(path: path), connect: { try DownloadStore(path: path) },
                     remove: { try? FileManager.default.removeItem(atPath: folder) })
    }
}
