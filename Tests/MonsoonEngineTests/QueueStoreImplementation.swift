import Foundation
import Testing
@testable import MonsoonEngine

/// One implementation of `QueueStore` for the conformance suite: it opens a new, empty queue
/// and, for the tests of several processes, more connections to that same queue.
///
/// A second implementation (PostgreSQL, next) adds itself to `all`, and every test of
/// `QueueStoreConformanceTests` runs against it too.
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
        let folder = TemporaryFolder()
        let path = folder.file("queue.sqlite")
        return Queue(store: try DownloadStore(path: path), connect: { try DownloadStore(path: path) }, remove: { folder.remove() })
    }
}
