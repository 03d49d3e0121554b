import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// The episodes follow their downloads during a run without a transaction per event: a change is
/// written at once after a quiet quarter of a second, else by the next event that finds it so (a
/// progress event too), and all at `finish`.
@Suite struct EpisodeStateWriterTests {
    final class Clock: @unchecked Sendable {
        // Safe: read and moved by the test's one task only.
        var now = ContinuousClock.now
    }

    /// A home of `count` episodes, all queued and handed to the engine's queue, in one file.
    struct Home {
        let path: String
        let database: Database
        let queue: EpisodeQueue
        let engine: DownloadStore
        let episodes: [Int]
    }

    func home(in folder: String, episodes count: Int) async throws -> Home {
        let server = try TestServer()
        defer { server.stop() }
        let path = folder + "/monsoon.sqlite"
        let library = try PodcastLibrary(database: Database(path: path), manager: DownloadManager(configuration: EngineConfiguration()))
        server.setRoute("/feed", feedRoute(rss(items: (0..<count).map { (guid: "g\($0)", title: "Episode \($0)", url: "https://cdn.example/\($0).mp3") })))
        _ = try await library.subscribe(to: server.url("/feed"))
        let database = try Database(path: path)
        let queue = try EpisodeQueue(database: database)
        let episodes = try library.episodes(of: 1).map(\.id).sorted()
        try queue.add(episodes)
        let engine = try DownloadStore(path: path)
        _ = try engine.add(try queue.requests(root: folder, template: .standard, allowingPrivate: false))
        return Home(path: path, database: database, queue: queue, engine: engine, episodes: episodes)
    }

    func temporaryFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-writer-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func changesInABurstAreWrittenTogetherAndAllAtTheEnd() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover temporary folder is harmless
        let home = try await home(in: folder, episodes: 3)
        let (path, database, queue, engine, episodes) = (home.path, home.database, home.queue, home.engine, home.episodes)

        let clock = Clock()
        let writer = try EpisodeStateWriter(databasePath: path, appliesRetention: false, now: { clock.now })
        func change(_ index: Int, _ status: String, after milliseconds: Int) throws {
            let id = "e\(episodes[index])"
            try database.run("UPDATE downloads SET status = ?, file_path = ?, bytes = ? WHERE id = ?", status,
                             status == "completed" ? "\(folder)/\(index).mp3" : nil, status == "completed" ? 100 : 0, id)
            clock.now += .milliseconds(milliseconds)
            writer.record(.statusChanged(try #require(try engine.download(withID: DownloadID(id)))))
        }
        func state(_ index: Int) throws -> EpisodeDownloadState? { try queue.episode(withID: episodes[index])?.downloadState }

        try change(0, "downloading", after: 0)
        #expect(try state(0) == .downloading, "the first change, after a quiet moment, at once")
        try change(1, "completed", after: 100)
        #expect(try state(1) == .queued, "within the quarter of a second: not yet")
        try change(2, "failed", after: 200)
        #expect(try state(1) == .downloaded && state(2) == .failed, "the next change a quarter of a second on takes both")
        try change(1, "failed", after: 10)
        #expect(try state(1) == .downloaded)
        clock.now += .milliseconds(300)
        writer.record(.progress(id: DownloadID("e\(episodes[0])"), bytes: 10, total: 100))
        #expect(try state(1) == .failed, "a progress event a quarter of a second on writes what waits")
        try change(0, "completed", after: 10)
        #expect(try state(0) == .downloading)
        #expect(writer.finish().failure == nil)
        #expect(try state(0) == .downloaded, "the last, at the end")
    }

    /// Every episode at once, on the connection that reads the engine's rows too, in more than one batch.
    @Test func reconcilingEveryEpisodeStreamsTheEnginesRows() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover temporary folder is harmless
        let home = try await home(in: folder, episodes: 2_100)
        try home.database.run("UPDATE downloads SET status = 'completed', file_path = id || '.mp3', bytes = 7")
        try home.queue.reconcile()
        #expect(try home.database.scalarInt("SELECT count(*) FROM episodes WHERE download_state = 'downloaded' AND bytes_on_disk = 7") == 2_100)
    }
}
