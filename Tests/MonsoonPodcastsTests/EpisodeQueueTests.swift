import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// The episode queue's logic on an in-memory database: order, names, states, retention.
@Suite struct EpisodeQueueTests {
    /// A library with one podcast of `count` episodes (published 10, 11, … June 2024).
    func fixture(count: Int = 4, titles: [String]? = nil) async throws -> (LibraryFixture, EpisodeQueue, [Episode]) {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let items = (0..<count).map { (guid: Optional("g\($0)"), title: titles?[$0] ?? "Episode \($0)", url: Optional("https://cdn.example/\($0).mp3")) }
        server.setRoute("/feed", feedRoute(rss(title: "Show", items: items)))
        _ = try await fixture.library.subscribe(to: server.url("/feed"))
        await fixture.manager.shutdown()
        let episodes = try fixture.library.episodes(of: 1).sorted { $0.id < $1.id }
        return (fixture, try EpisodeQueue(database: fixture.database), episodes)
    }

    @Test func addMoveRemoveKeepTheUsersOrder() async throws {
        let (_, queue, episodes) = try await fixture()
        let ids = episodes.map(\.id)
        #expect(try queue.add([ids[2], ids[0], ids[2]]) == [ids[2], ids[0]], "a repeat is queued once")
        #expect(try queue.add([ids[1]]) == [ids[1]])
        #expect(try queue.entries().map(\.episode.id) == [ids[2], ids[0], ids[1]])
        try queue.move(ids[1], to: 1)
        #expect(try queue.entries().map(\.episode.id) == [ids[1], ids[2], ids[0]])
        try queue.move(ids[1], to: 99)
        #expect(try queue.entries().map(\.episode.id) == [ids[2], ids[0], ids[1]])
        try queue.remove([ids[0]])
        #expect(try queue.entries().map(\.episode.id) == [ids[2], ids[1]])
        #expect(throws: LibraryError.self) { try queue.add([999]) }
        #expect(throws: LibraryError.self) { try queue.move(ids[0], to: 1) }
        #expect(throws: LibraryError.self) { try queue.remove([ids[2], ids[0]]) }
        #expect(try queue.entries().map(\.episode.id) == [ids[2], ids[1]], "a remove that names one not queued changes nothing")
        #expect(try queue.entries().allSatisfy { $0.episode.downloadState == .queued })
    }

    /// An episode downloaded already is not queued again; one without a media file is refused, and nothing is queued.
    @Test func addSkipsTheDownloadedAndRefusesAnEpisodeWithoutMediaFile() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let items = [(guid: Optional("g0"), title: "Has one", url: Optional("https://cdn.example/0.mp3")),
                     (guid: Optional("g1"), title: "Done", url: Optional("https://cdn.example/1.mp3")),
                     (guid: Optional("g2"), title: "Text only", url: String?.none)]
        server.setRoute("/feed", feedRoute(rss(title: "Show", items: items)))
        _ = try await fixture.library.subscribe(to: server.url("/feed"))
        await fixture.manager.shutdown()
        let ids = Dictionary(uniqueKeysWithValues: try fixture.library.episodes(of: 1).map { ($0.title ?? "", $0.id) })
        let queue = try EpisodeQueue(database: fixture.database)
        try fixture.database.run("UPDATE episodes SET download_state = 'downloaded' WHERE id = ?", ids["Done"]!)
        // The batch with one refused queues nothing; without it, the downloaded one is passed over.
        #expect(throws: LibraryError.self) { try queue.add([ids["Has one"]!, ids["Text only"]!]) }
        #expect(try queue.entries().isEmpty)
        #expect(try queue.add([ids["Done"]!, ids["Has one"]!]) == [ids["Has one"]!])
        #expect(throws: LibraryError(.notFound, "episode \(ids["Text only"]!) has no media file (its item has no enclosure) to download")) {
            try queue.add([ids["Has one"]!, ids["Text only"]!])
        }
        #expect(try queue.entries().map(\.episode.id) == [ids["Has one"]!])
    }

    @Test func requestsFollowTheQueueWithTemplatedNames() async throws {
        let (_, queue, episodes) = try await fixture(count: 3, titles: ["Intro", "../../etc/passwd", "Intro"])
        let ids = episodes.map(\.id)
        try queue.add([ids[2], ids[0], ids[1]])
        let requests = try queue.requests(root: "/root", template: .standard, allowingPrivate: false)
        #expect(requests.map(\.id.rawValue) == ["e\(ids[2])", "e\(ids[0])", "e\(ids[1])"])
        #expect(requests.map(\.priority) == [-1, -2, -3], "queue order as priority")
        #expect(requests[1].destination == .named(folder: "/root/Show", stem: "2024-06-10 - Intro"))
        #expect(requests[0].destination == .named(folder: "/root/Show", stem: "2024-06-12 - Intro"), "different dates: no clash")
        guard case .named(let folder, let stem) = requests[2].destination else { Issue.record("named"); return }
        #expect(folder == "/root/Show" && !stem.contains("/") && !stem.hasPrefix("."))
        #expect(requests.allSatisfy { $0.expectedMediaType == "audio/mpeg" && $0.expectedSize == 1000 })
        // A template without a date: the two intros clash and are numbered by date.
        let flat = try NamingTemplate("{podcast}/{title}.{ext}")
        let named = try queue.requests(root: "/r", template: flat, allowingPrivate: false)
        #expect(named.first { $0.id.rawValue == "e\(ids[0])" }?.destination == .named(folder: "/r/Show", stem: "Intro"))
        #expect(named.first { $0.id.rawValue == "e\(ids[2])" }?.destination == .named(folder: "/r/Show", stem: "Intro (2)"))
    }

    @Test func statesFollowTheEngine() async throws {
        let (fixture, queue, episodes) = try await fixture(count: 4)
        let ids = episodes.map(\.id)
        try queue.add(ids)
        let store = try DownloadStore(database: fixture.database)
        _ = try store.add(try queue.requests(root: "/r", template: .standard, allowingPrivate: false))
        // The engine's states, as a run leaves them.
        func set(_ id: Int, _ status: String, error: String? = nil, file: String? = nil, bytes: Int = 0, retryAt: Double? = nil) throws {
            try fixture.database.run("UPDATE downloads SET status = ?, error_message = ?, file_path = ?, bytes = ?, retry_at = ? WHERE id = ?",
                                     status, error, file, bytes, retryAt, "e\(id)")
        }
        try set(ids[0], "completed", file: "/r/Show/a.mp3", bytes: 1000)
        try set(ids[1], "failed", error: "the server answered 404 Not Found")
        try set(ids[2], "waitingToRetry", error: "the server answered 503 Service Unavailable", retryAt: Date().timeIntervalSince1970 + 30)
        try set(ids[3], "paused", bytes: 10)
        try queue.reconcile()
        let after = try fixture.library.episodes(of: 1).sorted { $0.id < $1.id }
        #expect(after.map(\.downloadState) == [.downloaded, .failed, .queued, .paused])
        #expect(after[0].fileName == "/r/Show/a.mp3" && after[0].bytesOnDisk == 1000 && after[0].queuePosition == nil, "downloaded: out of the queue")
        #expect(after[1].downloadError == "the server answered 404 Not Found")
        #expect(after[2].downloadError == "the server answered 503 Service Unavailable")
        let entries = try queue.entries()
        #expect(entries.map(\.episode.id) == [ids[1], ids[2], ids[3]])
        #expect(entries[1].download?.status == .waitingToRetry && entries[1].download?.retryAt != nil)
        // A downloaded episode is not queued again.
        #expect(try queue.add([ids[0]]).isEmpty)
    }

    @Test func retentionDeletesPlayedAndOlderDownloads() async throws {
        let (fixture, _, episodes) = try await fixture(count: 4)
        let folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-retention-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (index, episode) in episodes.enumerated() {
            let path = "\(folder)/\(index).mp3"
            try Data(repeating: 1, count: 100 * (index + 1)).write(to: URL(fileURLWithPath: path))
            try fixture.database.run("UPDATE episodes SET download_state = 'downloaded', file_name = ? WHERE id = ?", path, episode.id)
        }
        let files = try EpisodeFiles(database: fixture.database)
        let settings = try Settings(database: fixture.database)
        #expect(try files.entries().map(\.bytes) == [400, 300, 200, 100], "newest first, sizes from the files")
        #expect(try files.applyRetention(settings).episodes.isEmpty, "both off by default")
        try settings.set(.keepLatest, "2", podcast: 1)
        let kept = try files.applyRetention(settings)
        #expect(kept.episodes.sorted() == [episodes[0].id, episodes[1].id], "the two oldest go")
        #expect(kept.bytes == 300)
        #expect(!FileManager.default.fileExists(atPath: "\(folder)/0.mp3") && FileManager.default.fileExists(atPath: "\(folder)/3.mp3"))
        try settings.set(.autoDeletePlayed, "on")
        try files.setPlayed([episodes[3].id], true)
        #expect(try files.applyRetention(settings, keepLatest: false).episodes == [episodes[3].id])
        #expect(try files.entries().map(\.episodeID) == [episodes[2].id])
        #expect(throws: LibraryError.self) { try files.delete([episodes[2].id, 999]) }
        // Another file took the name since (the size is not the one downloaded): left alone.
        try fixture.database.run("UPDATE episodes SET bytes_on_disk = 123 WHERE id = ?", episodes[2].id)
        let other = try files.delete([episodes[2].id])
        #expect(other.episodes.isEmpty && other.skipped.first?.1.contains("is not the one downloaded") == true)
        #expect(FileManager.default.fileExists(atPath: "\(folder)/2.mp3"), "an unknown id changes nothing")
    }

    @Test func settingsAreCheckedAndNormalized() throws {
        let settings = try Settings(database: try Database(path: ":memory:"))
        #expect(try settings.effective(.concurrency) == "2")
        #expect(try settings.set(.diskReserve, "1500MB") == "1500MB", "kept as given: no rounding")
        #expect(try settings.diskReserve() == 1500 << 20)
        #expect(try settings.set(.diskReserve, "500MB") == "500MB")
        #expect(try settings.diskReserve() == 500 << 20)
        #expect(try settings.limitRate() == nil, "no rate limit by default")
        #expect(try settings.set(.limitRate, "2M") == "2M")
        #expect(try settings.limitRate() == 2 << 20)
        #expect(try settings.set(.limitRate, "0") == "off")
        #expect(try settings.limitRate() == nil)
        #expect(throws: SettingError(.invalidValue, "'fast' is not a valid limit-rate: \(SettingKey.limitRate.summary)")) {
            try settings.set(.limitRate, "fast")
        }
        #expect(throws: SettingError.self) { try settings.set(.limitRate, "0.5") }
        #expect(try settings.set(.autoDeletePlayed, "YES") == "on")
        #expect(try settings.set(.perHost, "none") == "off")
        #expect(try settings.perHost() == nil)
        #expect(throws: SettingError.self) { try settings.set(.concurrency, "0") }
        #expect(throws: SettingError(.invalidValue, "'1001' is not a valid concurrency: \(SettingKey.concurrency.summary)")) {
            try settings.set(.concurrency, "1001")
        }
        #expect(try settings.set(.concurrency, "1000") == "1000")
        #expect(try settings.concurrency() == 1000)
        #expect(#expect(throws: SettingError.self) { try settings.set(.template, "{title}.mp3") }?.code == .invalidValue)
        #expect(throws: SettingError.self) { try settings.set(.downloadRoot, "relative/path") }
        #expect(throws: SettingError(.notPerPodcast, "retries has no per-podcast value; set it without --podcast")) {
            try settings.set(.retries, "2", podcast: 1)
        }
        try settings.set(.keepLatest, "5")
        try settings.set(.keepLatest, "1", podcast: 7)
        #expect(try settings.keepLatest(podcast: 7) == 1 && settings.keepLatest(podcast: 8) == 5)
        #expect(try settings.downloadRoot(userHome: "/home/u") == "/home/u/Podcasts")
    }

    /// What arrived: past the back catalogue a subscription read (a library from before takes every episode it has for
    /// its catalogue) and past the last episode queued or downloaded; never one queued.
    @Test func arrivedEpisodesArePastTheCatalogueAndTheLastTaken() throws {
        let path = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-arrived-\(UUID().uuidString).db"
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let old = try Database(path: path)
            try Migrator(component: "library", Array(LibrarySchema.migrator.migrations.prefix(5))).migrate(old)
            try old.run("INSERT INTO podcasts (id, feed_url, title, added) VALUES (1, 'https://example.com/feed.xml', 'Show', 0)")
            try old.run("""
                INSERT INTO episodes (id, podcast_id, identity, title, enclosure_url) VALUES
                    (7, 1, 'g7', 'Seven', 'https://example.com/7.mp3'), (8, 1, 'g8', 'Eight', 'https://example.com/8.mp3')
                """)
        }
        let database = try Database(path: path)
        let queue = try EpisodeQueue(database: database)
        #expect(try queue.arrivedEpisodes(podcast: 1) == [], "a library from before: its episodes are the catalogue")
        let add = "INSERT INTO episodes (id, podcast_id, identity, title, enclosure_url, published) VALUES (?, 1, ?, ?, ?, ?)"
        for (id, day) in [(9, 2.0), (10, 1.0), (11, 3.0)] {
            try database.run(add, id, "g\(id)", "Episode \(id)", "https://example.com/\(id).mp3", Date(timeIntervalSince1970: day * 86_400))
        }
        #expect(try queue.arrivedEpisodes(podcast: 1) == [10, 9, 11], "oldest first")
        _ = try queue.add([10])
        #expect(try queue.arrivedEpisodes(podcast: 1) == [11], "only those past the last one queued")
    }
}
