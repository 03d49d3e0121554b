import Foundation
import MonsoonStore
import Testing
@testable import MonsoonEngine

/// A connection the caller hands to `DownloadManager.open` becomes the queue's when it writes the
/// queue's own file; one that only reads, is a copy in memory or is to another file is refused, and
/// the queue opens its own: every row lands in the file either way.
@Suite struct HandedConnectionTests {
    @Test func theQueueKeepsAConnectionToItsFileAndRefusesOthers() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let database = folder.file("queue.sqlite")
        var configuration = fastConfiguration()
        configuration.maxConcurrentDownloads = 0   // nothing starts: the queue only
        _ = try DownloadStore(path: database)
        let offers: [(what: String, connection: Database)] = [
            ("the same file", try Database(path: database)),
            ("a reader", try Database(readingOnly: database)),
            ("a copy in memory", try Database.inMemoryCopy(of: database)),
            ("another file", try Database(path: folder.file("other.sqlite"))),
        ]
        for (index, offer) in offers.enumerated() {
            let manager = try await DownloadManager.open(configuration: configuration, databasePath: database, connection: offer.connection)
            try await manager.enqueue(request(DownloadID("d\(index)"), URL(string: "http://127.0.0.1:9/d")!, to: folder.file("d\(index)")))
            #expect(await manager.shutdown() == nil, "\(offer.what): every save worked")
        }
        let store = try DownloadStore(path: database)
        for (index, offer) in offers.enumerated() {
            #expect(try store.download(withID: DownloadID("d\(index)")) != nil, "\(offer.what): the row is in the file")
            // Only the first was the queue's: its worker inserted the row through it.
            #expect((offer.connection.lastInsertRowID != 0) == (index == 0), "\(offer.what)")
        }
        #expect(offers.map(\.connection.isFile) == [true, true, false, true])
    }
}
