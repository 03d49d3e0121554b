import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// The podcast layer follows the engine through `QueueStore` alone: here the engine's queue
/// is a SQLite file of its own, apart from the library's database (as a PostgreSQL queue would
/// be), and the library's database never gets the engine's tables.
@Suite struct EpisodeQueueStoreBoundaryTests {
    /// A library of `count` episodes, all queued, its queue and files following an engine queue in another file.
    struct Fixture {
        let library: LibraryFixture
        let engine: DownloadStore
        /// A second connection to the engine's file, to set states as a run leaves them.
        let engineDatabase: Database
        let queue: EpisodeQueue
        let files: EpisodeFiles
        let episodes: [Int]
        let folder: String

        func set(_ id: String, _ status: String, error: (code: String, message: String)? = nil, file: String? = nil, bytes: Int = 0) throws {
            try engineDatabase.run("UPDATE downloads SET status = ?, error_code = ?, error_message = ?, file_path = ?, bytes = ?, etag = ? WHERE id = ?",
                                   status, error?.code, error?.message, file, bytes, file.map { "\"\($0)\"" }, id)
        }
    }

    func fixture(count: Int) async throws -> Fixture {
        let server = try TestServer()
        defer { server.stop() }
        let library = try LibraryFixture()
        let items = (0..<count).map { (guid: Optional("g\($0)"), title: "Episode \($0)", url: Optional("https://cdn.example/\($0).mp3")) }
        server.setRoute("/feed", feedRoute(rss(title: "Show", items: items)))
        _ = try await library.library.subscribe(to: server.url("/feed"))
        await library.manager.shutdown()
        let folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-boundary-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let engine = try DownloadStore(path: folder + "/engine.sqlite")
        let queue = try EpisodeQueue(database: library.database, downloads: engine)
        // Every episode queued, and handed to the engine's queue as `download` does.
        let episodes = try library.library.episodes(of: 1).map(\.id).sorted()
        try queue.add(episodes)
        _ = try engine.add(try queue.requests(root: folder, template: .standard, allowingPrivate: false))
        return Fixture(library: library, engine: engine, engineDatabase: try Database(path: folder + "/engine.sqlite"), queue: queue,
                       files: try EpisodeFiles(database: library.database, downloads: engine), episodes: episodes, folder: folder)
    }

    @Test func theQueueFollowsAnEngineQueueInAnotherDatabase() async throws {
        // More episodes than one statement binds ids for: the states come in several chunks.
        let fixture = try await fixture(count: 1_100)
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }   // a leftover temporary folder is harmless
        let ids = fixture.episodes
        // Downloads that are no episode's, though their ids start with "e".
        _ = try fixture.engine.add([DownloadRequest(id: DownloadID("e0\(ids[3])"), url: URL(string: "https://x.example/a")!, destination: .directory(fixture.folder)),
                                    DownloadRequest(id: "e-notes", url: URL(string: "https://x.example/b")!, destination: .directory(fixture.folder))])
        try fixture.set("e\(ids[0])", "completed", file: fixture.folder + "/a.mp3", bytes: 1_000)
        try fixture.set("e\(ids[1])", "failed", error: ("httpStatus", "the server answered 404 Not Found"))
        try fixture.set("e\(ids[2])", "queued", error: ("notEnoughDiskSpace", "the disk is full"))
        try fixture.set("e\(ids[1_050])", "paused", bytes: 10)
        try fixture.set("e0\(ids[3])", "completed", file: "/elsewhere", bytes: 5)

        try fixture.queue.reconcile()
        let after = try fixture.library.library.episodes(of: 1).sorted { $0.id < $1.id }
        #expect(after[0].downloadState == .downloaded && after[0].fileName == fixture.folder + "/a.mp3" && after[0].bytesOnDisk == 1_000)
        #expect(after[0].queuePosition == nil, "downloaded: out of the queue")
        #expect(after[1].downloadState == .failed && after[1].downloadError == "the server answered 404 Not Found")
        #expect(after[2].downloadState == .queued && after[2].downloadError == "the disk is full")
        #expect(after[3].downloadState == .queued && after[3].fileName == nil, "e0N is not episode N's download")
        #expect(after[1_050].downloadState == .paused)

        let entries = try fixture.queue.entries()
        #expect(entries.count == ids.count - 1)
        #expect(entries.allSatisfy { $0.download != nil }, "every queued episode's download is found, in every chunk")
        #expect(entries.first { $0.episode.id == ids[1_050] }?.download?.status == .paused)
        #expect(entries.first { $0.episode.id == ids[2] }?.download?.error == "the disk is full")

        // One episode alone.
        try fixture.set("e\(ids[1_050])", "downloading", bytes: 20)
        try fixture.queue.reconcile(episodes: [ids[1_050]])
        #expect(try fixture.queue.episode(withID: ids[1_050])?.downloadState == .downloading)

        // The library's database never got the engine's tables: nothing joins them.
        #expect(try fixture.library.database.scalarInt("SELECT count(*) FROM sqlite_master WHERE name IN ('downloads', 'download_commands')") == 0)
    }

    @Test func deletingAnEpisodesFileForgetsItsDownloadInTheEngineQueue() async throws {
        let fixture = try await fixture(count: 3)
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }   // a leftover temporary folder is harmless
        let ids = fixture.episodes
        for (index, id) in ids.enumerated() {
            let path = "\(fixture.folder)/\(index).mp3"
            try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: path))
            try fixture.set("e\(id)", "completed", file: path, bytes: 100)
        }
        try fixture.queue.reconcile()

        let deletion = try fixture.files.delete([ids[0]])
        #expect(deletion.episodes == [ids[0]] && deletion.bytes == 100)
        #expect(try fixture.engine.download(withID: DownloadID("e\(ids[0])")) == nil, "the engine forgot the finished download")
        #expect(try fixture.queue.episode(withID: ids[0])?.downloadState == EpisodeDownloadState.none)
        try fixture.queue.reconcile()
        #expect(try fixture.queue.episode(withID: ids[0])?.downloadState == EpisodeDownloadState.none, "and a reconcile does not bring it back")

        // `archive --refetch-missing`: a file gone by hand is downloadable again.
        try FileManager.default.removeItem(atPath: "\(fixture.folder)/1.mp3")
        try fixture.queue.forgetMissingDownloads([ids[1]])
        #expect(try fixture.engine.download(withID: DownloadID("e\(ids[1])")) == nil)
        #expect(try fixture.queue.episode(withID: ids[1])?.downloadState == EpisodeDownloadState.none)
        #expect(try fixture.engine.download(withID: DownloadID("e\(ids[2])"))?.status == .completed, "the others stay")
    }
}
