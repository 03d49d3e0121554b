import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// `ArchiveRun.run` on a real library in a home on disk, against the test server: the order of a
/// run's steps (feeds, plan, downloads, manifests), and which failures fail it.
@Suite struct ArchiveRunTests {
    /// An episode's file, as long as the feed says (so a refresh finds nothing to ask the server about).
    static let audio = Body.bytes((0..<1000).map { UInt8($0 % 251) })

    /// A home on disk (its database file, its library) with the archive's root inside, and the server.
    final class Fixture {
        let server: TestServer
        let folder: String
        let databasePath: String
        let root: String
        let database: Database
        let library: PodcastLibrary
        let manager: DownloadManager
        /// The events of the last run, in order.
        var events: [ArchiveRun.Event] = []
        /// The plans the downloads were asked for, one per run that got so far.
        var downloaded: [ArchiveRun.Plan] = []
        /// How often the run opened a library (feeds, then a scan for new versions).
        var libraryOpens = 0

        init() throws {
            server = try TestServer()
            folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-archive-run-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            databasePath = folder + "/monsoon.db"
            root = folder + "/Archive"
            database = try Database(path: databasePath)
            manager = DownloadManager(configuration: EngineConfiguration())
            library = try PodcastLibrary(database: database, manager: manager)
        }

        deinit {
            server.stop()
            // A temporary folder left behind costs nothing but disk; the test's result stands.
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// A feed at `path` named `title`, its one episode's enclosure at `path + ".mp3"`.
        func serveFeed(_ path: String, title: String = "Show", extraChannel: String = "") {
            let episode = (guid: Optional("g" + path), title: "Episode", url: Optional(server.url(path + ".mp3").absoluteString))
            server.setRoute(path, feedRoute(rss(title: title, items: [episode], extraChannel: extraChannel)))
            server.setRoute(path + ".mp3", Route(body: ArchiveRunTests.audio, contentType: "audio/mpeg"))
        }

        /// A run of `paths`' feeds: the downloads run in an engine of their own on the home's database,
        /// the episodes following them, as the command's do. `scanLibrary` stands in for the one lent
        /// to look for new versions.
        /// `reconciled`: called once the episodes follow the downloads, before the manifests.
        func run(_ paths: [String], scanLibrary: PodcastLibrary? = nil, reconciled: () throws -> Void = {}) async throws -> ArchiveRun.Outcome {
            events = []
            let queue = try EpisodeQueue(database: database)
            var opens = 0
            let (outcome, _) = try await ArchiveRun.run(
                paths.map(server.url), options: ArchiveRun.Options(root: root, naming: .standard), queue: queue, store: try DownloadStore(database: database),
                databasePath: databasePath,
                library: { body in
                    opens += 1
                    self.libraryOpens += 1
                    try await body(opens > 1 ? scanLibrary ?? self.library : self.library)
                },
                allowingPrivate: { true }, select: { try ArchiveSelection($0) },
                download: { plan in
                    self.downloaded.append(plan)
                    let engine = try await DownloadManager.open(databasePath: self.databasePath, watchesOtherProcesses: false)
                    _ = try await engine.enqueue(contentsOf: plan.requests)
                    await engine.waitUntilIdle()
                    await engine.shutdown()
                    try queue.reconcile()
                    try reconciled()
                }, report: { self.events.append($0) })
            return outcome
        }

        /// The GET requests the server saw for `path`.
        func gets(_ path: String) -> Int { server.requests(for: path).filter { $0.method == "GET" }.count }

        /// The SHA-256 of the file at `path`, or nil when there is none.
        func sha256(_ path: String) -> String? { try? FileDigest.sha256(ofFile: path) }   // nil: no file, which the caller expects
    }

    /// The one episode file of `show` under the root, if any.
    func episodeFile(_ fixture: Fixture, _ show: String = "Show") throws -> String? {
        let folder = fixture.root + "/" + show
        return try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".mp3") }.map { folder + "/" + $0 }
    }

    @Test func aCleanRunDownloadsThenWritesTheManifestAndALaterRunSkipsWhatIsThere() async throws {
        let fixture = try Fixture()
        fixture.serveFeed("/feed")
        let first = try await fixture.run(["/feed"])
        #expect(!first.failed && first.feedsFailed == 0 && fixture.events.isEmpty)
        #expect(fixture.downloaded.count == 1 && fixture.downloaded[0].requests.count == 1)
        let file = try #require(try episodeFile(fixture))
        #expect(fixture.sha256(file) == Self.audio.sha256Hex())
        // Written after the downloads: it lists the file as it is on disk.
        let manifest = try Manifest.read(in: fixture.root + "/Show")
        #expect(manifest.files.first { $0.kind == "episode" }?.sha256 == Self.audio.sha256Hex())
        #expect(manifest.files.contains { $0.kind == "feed" }, "the feed's copy is listed too")
        #expect(fixture.libraryOpens == 1, "a first subscription has nothing archived to look at for new versions")

        let second = try await fixture.run(["/feed"])
        #expect(!second.failed && second.skipped == 1 && second.missing == 0)
        #expect(fixture.downloaded.count == 2 && fixture.downloaded[1].requests.isEmpty)
        #expect(fixture.gets("/feed.mp3") == 1, "fetched once")
        #expect(fixture.libraryOpens == 3, "refreshed: a library is lent to look for new versions")
        await fixture.manager.shutdown()
    }

    /// An episode's digest comes with its download, worked out as the file was written: the manifest lists it without
    /// reading the file back, while the file is as the download left it. Each file here has a byte changed after its
    /// download: one whose row was saved after the change (the digest stands, which shows the file was not read), one
    /// changed after its row (its ctime says so: hashed as it is now), and one a hook ran on (hashed too).
    @Test func theManifestTakesTheDownloadsDigestForAFileAsItLeftIt() async throws {
        let fixture = try Fixture()
        for (path, title) in [("/feed", "Show"), ("/other", "Other"), ("/hooked", "Hooked")] { fixture.serveFeed(path, title: title) }
        var changed: [String: String] = [:]
        _ = try await fixture.run(["/feed", "/other", "/hooked"], reconciled: {
            for show in ["Show", "Other", "Hooked"] {
                let file = try #require(try episodeFile(fixture, show))
                var bytes = try Data(contentsOf: URL(filePath: file))
                bytes[0] ^= 0xff
                try bytes.write(to: URL(filePath: file))
                changed[show] = Body.bytes(Array(bytes)).sha256Hex()
                if show != "Other" {
                    try fixture.database.run("UPDATE downloads SET updated = ? WHERE file_path = ?", Date().timeIntervalSince1970 + 60, file)
                }
                if show == "Hooked" {
                    let id = try #require(try fixture.database.scalarText("SELECT id FROM downloads WHERE file_path = ?", file))
                    try HookLedger(database: fixture.database).owe([DownloadID(id)])
                }
            }
        })
        func listed(_ show: String) throws -> String? {
            try Manifest.read(in: fixture.root + "/" + show).files.first { $0.kind == "episode" }?.sha256
        }
        #expect(try listed("Show") == Self.audio.sha256Hex(), "the download's digest: the file was not read")
        #expect(try listed("Other") == changed["Other"], "changed after its row: hashed")
        #expect(try listed("Hooked") == changed["Hooked"], "a hook ran on it: hashed")
        await fixture.manager.shutdown()
    }

    /// The hashes a manifest works out are saved together, and still saved when a later file fails
    /// the listing: the next manifest does not hash those files again.
    @Test func aManifestThatFailsKeepsTheHashesItMade() async throws {
        let fixture = try Fixture()
        fixture.serveFeed("/feed")
        _ = try await fixture.run(["/feed"])
        await fixture.manager.shutdown()
        try fixture.database.run("UPDATE episodes SET sha256 = NULL")
        // An extra that lists as a file but cannot be read (stat says a regular file; read fails).
        let folder = fixture.root + "/Show"
        try FileManager.default.createSymbolicLink(atPath: folder + "/unreadable", withDestinationPath: "/proc/self/mem")
        let podcast = try #require(try fixture.database.scalarInt("SELECT id FROM podcasts"))
        let files = try EpisodeFiles(database: fixture.database)
        #expect(throws: EpisodeFileError.self) {
            try files.manifest(podcast: podcast, folder: folder, extras: [.init(path: folder + "/unreadable", kind: "feed", sourceURL: nil)])
        }
        #expect(try fixture.database.scalarText("SELECT sha256 FROM episodes") == Self.audio.sha256Hex(), "the episode's hash is kept")
    }

    @Test func aFeedNotReadFailsTheRunAndTheOthersAreArchived() async throws {
        let fixture = try Fixture()
        fixture.serveFeed("/feed")
        fixture.server.setRoute("/gone", Route(body: .bytes(Array("gone".utf8)), status: 404, contentType: "text/plain"))
        let outcome = try await fixture.run(["/gone", "/feed"])
        #expect(outcome.failed && outcome.feedsFailed == 1 && outcome.scansFailed == 0 && outcome.manifestsFailed == 0)
        guard case .feedFailed(let url, _) = try #require(fixture.events.first), fixture.events.count == 1 else {
            Issue.record("one failed feed: \(fixture.events)"); return
        }
        #expect(url == fixture.server.url("/gone"))
        #expect(fixture.sha256(try #require(try episodeFile(fixture))) == Self.audio.sha256Hex(), "the other feed is archived")
        await fixture.manager.shutdown()
    }

    @Test func aPageNotReadFailsTheRunAndThePagesBeforeItAreArchived() async throws {
        let fixture = try Fixture()
        fixture.serveFeed("/feed", extraChannel: "<atom:link rel=\"next\" href=\"/page2\"/>")
        fixture.server.setRoute("/page2", Route(body: .bytes(Array("gone".utf8)), status: 404, contentType: "text/plain"))
        let outcome = try await fixture.run(["/feed"])
        #expect(outcome.failed && outcome.feedsFailed == 1)
        guard case .pageFailed(let podcast, let summary) = try #require(fixture.events.first), fixture.events.count == 1 else {
            Issue.record("one page warning: \(fixture.events)"); return
        }
        #expect(podcast.name == "Show" && summary.pageError != nil)
        #expect(fixture.sha256(try #require(try episodeFile(fixture))) == Self.audio.sha256Hex(), "the first page's episode is archived")
        await fixture.manager.shutdown()
    }

    @Test func aFolderThatIsALinkIsRefusedAndFailsTheRunWithNothingWrittenThroughIt() async throws {
        let fixture = try Fixture()
        fixture.serveFeed("/feed")
        let elsewhere = fixture.folder + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: fixture.root, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fixture.root + "/Show", withDestinationPath: elsewhere)
        let outcome = try await fixture.run(["/feed"])
        #expect(outcome.failed && outcome.feedsFailed == 1, "counted with the feeds not archived")
        guard case .refused(let podcast, let reason) = try #require(fixture.events.first), fixture.events.count == 1 else {
            Issue.record("one refusal: \(fixture.events)"); return
        }
        #expect(podcast.name == "Show" && reason.contains("is a symbolic link"))
        #expect(fixture.downloaded.first?.requests.isEmpty == true && fixture.gets("/feed.mp3") == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        await fixture.manager.shutdown()
    }

    @Test func aDamagedManifestStopsTheRunBeforeAnyDownload() async throws {
        let fixture = try Fixture()
        fixture.serveFeed("/feed")
        try FileManager.default.createDirectory(atPath: fixture.root + "/Show", withIntermediateDirectories: true)
        let path = fixture.root + "/Show/" + Manifest.fileName
        try Data("not a manifest".utf8).write(to: URL(fileURLWithPath: path))
        await #expect(throws: ArchiveRun.PlanError.self) { _ = try await fixture.run(["/feed"]) }
        #expect(fixture.downloaded.isEmpty && fixture.gets("/feed.mp3") == 0)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "not a manifest", "left as it is")
        await fixture.manager.shutdown()
    }

    @Test func aManifestThatCannotBeWrittenFailsTheRunItsEpisodesArchived() async throws {
        let fixture = try Fixture()
        fixture.serveFeed("/feed")
        try FileManager.default.createDirectory(atPath: fixture.root + "/Show", withIntermediateDirectories: true)
        let target = fixture.folder + "/manifest-elsewhere.json"
        try Data("kept".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: fixture.root + "/Show/" + Manifest.fileName, withDestinationPath: target)
        let outcome = try await fixture.run(["/feed"])
        #expect(outcome.failed && outcome.manifestsFailed == 1 && outcome.feedsFailed == 0)
        guard case .manifestFailed = try #require(fixture.events.first), fixture.events.count == 1 else {
            Issue.record("one manifest failure: \(fixture.events)"); return
        }
        #expect(fixture.sha256(try #require(try episodeFile(fixture))) == Self.audio.sha256Hex())
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "kept", "nothing written through the link")
        await fixture.manager.shutdown()
    }

    /// The manifests are written two at a time: each failure is said once, in the podcasts' order, and the others
    /// are written whole.
    @Test func manifestsWrittenTogetherSayTheirFailuresInTheRunsOrder() async throws {
        let fixture = try Fixture()
        let shows = ["One", "Two", "Three", "Four", "Five"]
        for show in shows {
            fixture.serveFeed("/\(show)", title: show)
            try FileManager.default.createDirectory(atPath: fixture.root + "/" + show, withIntermediateDirectories: true)
        }
        for show in ["Two", "Five"] {
            try FileManager.default.createSymbolicLink(atPath: fixture.root + "/\(show)/" + Manifest.fileName, withDestinationPath: fixture.folder + "/elsewhere")
        }
        let outcome = try await fixture.run(shows.map { "/" + $0 })
        #expect(outcome.manifestsFailed == 2)
        let failed = fixture.events.compactMap { event -> String? in
            guard case .manifestFailed(let podcast, _) = event else { return nil }
            return podcast.name
        }
        #expect(failed == ["Two", "Five"])
        for show in ["One", "Three", "Four"] {
            let manifest = try Manifest.read(in: fixture.root + "/" + show)
            #expect(manifest.podcast == show && manifest.files.map(\.kind).sorted() == ["episode", "feed"], "\(show): \(manifest.files.map(\.kind))")
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.folder + "/elsewhere"), "nothing written through a link")
        await fixture.manager.shutdown()
    }

    /// Two paths to one folder (a root reached through a link) are one manifest: the same lane, in order.
    @Test func aFolderReachedTwoWaysKeepsItsManifestsInOneLane() async throws {
        let fixture = try Fixture()
        for name in ["A", "B"] { try FileManager.default.createDirectory(atPath: fixture.root + "/" + name, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(atPath: fixture.root + "/L", withDestinationPath: fixture.root + "/A")
        #expect(ArchiveRun.lanes(of: ["A", "L", "B", "C"].map { fixture.root + "/" + $0 }) == [[0, 1], [2, 3]])
        await fixture.manager.shutdown()
    }

    @Test func aScanThatFailsFailsTheRunButIsNoFailedFeed() async throws {
        let fixture = try Fixture()
        fixture.serveFeed("/feed")
        _ = try await fixture.run(["/feed"])
        // The library lent for the scan cannot read its episodes.
        let broken = try Database(path: ":memory:")
        let scanLibrary = try PodcastLibrary(database: broken, manager: fixture.manager)
        try broken.run("DROP TABLE episodes")
        let outcome = try await fixture.run(["/feed"], scanLibrary: scanLibrary)
        #expect(outcome.failed && outcome.scansFailed == 1 && outcome.feedsFailed == 0)
        guard case .scanFailed(let podcast, _) = try #require(fixture.events.first), fixture.events.count == 1 else {
            Issue.record("one failed scan: \(fixture.events)"); return
        }
        #expect(podcast.name == "Show")
        #expect(fixture.downloaded.count == 2 && outcome.skipped == 1, "the run goes on: its feed is archived")
        await fixture.manager.shutdown()
    }
}
