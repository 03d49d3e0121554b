import Foundation
@testable import MonsoonEngine
import MonsoonStore
import Testing

/// A queue saved before downloads had owners opens with each download's owner taken from the id
/// its owner gave it, so an existing home's episodes, artwork and cluster jobs stay theirs.
@Suite struct DownloadOwnerMigrationTests {
    @Test func aQueueFromBeforeOwnersReadsTheOwnerEachIdNamed() throws {
        let folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-owners-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }   // the test's own folder: a leftover costs a few KiB of /tmp, nothing a test reads
        let path = folder + "/queue.sqlite"
        let expected: [(String, DownloadOwner)] = [
            ("e12", .episode), ("a3", .artwork), ("t12", .transcript), ("c12", .chapters), ("r4", .repair), ("j7-t2", .job),
            ("d17", .direct), ("e-notes", .direct), ("e007", .direct), ("j7", .direct), ("my-file", .direct),
        ]
        do {
            // The schema as the last Monsoon without owners left it, with its rows.
            let old = try Database(path: path)
            try Migrator(component: "downloads", DownloadStore.migrator.migrations.filter { $0.version <= 5 }).migrate(old)
            for (id, _) in expected {
                try old.run("INSERT INTO downloads (id, url, destination_kind, destination, status, updated) VALUES (?, ?, 'directory', '/srv', 'queued', 0)",
                            id, "https://example.org/\(id)")
            }
        }

        let store = try DownloadStore(path: path)
        #expect(try Migrator(component: "downloads", []).version(of: store.database) == DownloadStore.schemaVersion)
        let owners = try store.records(withIDs: expected.map { DownloadID($0.0) }).map { ($0.id.rawValue, $0.request.owner) }
        #expect(owners.map(\.0) == expected.map(\.0))
        #expect(owners.map(\.1) == expected.map(\.1))
        #expect(try store.states(ownedBy: .episode, changedSince: nil).map(\.id) == ["e12"])
        #expect(try store.states(ownedBy: .direct, changedSince: nil).map(\.id.rawValue) == ["d17", "e-notes", "e007", "j7", "my-file"])

        // A download added after keeps the owner its request says, whatever its id.
        _ = try store.add([DownloadRequest(id: "e99", url: URL(string: "https://example.org/x")!, destination: .directory("/srv"))])
        #expect(try store.record(withID: "e99")?.request.owner == .direct)
    }
}
