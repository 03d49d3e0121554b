import Foundation
@testable import MonsoonEngine
import MonsoonStore
import Testing

/// The index of file paths holds unfinished downloads only (schema version 8): a queue saved before opens with the
/// index rebuilt, a path is still found while its download runs and is free once it completed, and the lookup uses it.
@Suite struct FilePathIndexMigrationTests {
    @Test func aQueueFromBeforeFindsTheUnfinishedDownloadOfAPathThroughTheIndex() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("queue.sqlite")
        do {
            // The schema as version 7 left it, with a finished download and a running one.
            let old = try Database(path: path)
            try Migrator(component: "downloads", DownloadStore.migrator.migrations.filter { $0.version <= 7 }).migrate(old)
            for (id, status, file) in [("done", "completed", "/srv/a.mp3"), ("running", "downloading", "/srv/b.mp3")] {
                try old.run("INSERT INTO downloads (id, url, destination_kind, destination, status, file_path, updated) VALUES (?, ?, 'directory', '/srv', ?, ?, 0)",
                            id, "https://example.org/\(id)", status, file)
            }
        }

        let store = try DownloadStore(path: path)
        #expect(try store.owner(ofPath: "/srv/b.mp3") == "running")
        #expect(try store.owner(ofPath: "/srv/a.mp3") == nil, "a completed download's path is free to take")
        let plan = try store.database.statement("EXPLAIN QUERY PLAN SELECT id FROM downloads WHERE file_path = ? AND status != 'completed' LIMIT 1")
            .query(["/srv/b.mp3"], reading: PlanColumn.self) { $0.text(.detail) ?? "" }
        #expect(plan.contains { $0.contains("USING INDEX downloads_by_file_path") }, "\(plan)")
        let entries = try store.database.scalarInt("SELECT count(*) FROM downloads INDEXED BY downloads_by_file_path WHERE file_path IS NOT NULL AND status != 'completed'")
        #expect(entries == 1)
    }
}

/// The columns of `EXPLAIN QUERY PLAN`.
private enum PlanColumn: Int, TableColumn { case id, parent, notused, detail }
