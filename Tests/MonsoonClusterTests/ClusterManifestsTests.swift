import Foundation
@testable import MonsoonCluster
import MonsoonEngine
import MonsoonPodcasts
import Testing

/// Each podcast folder's manifest, written from the ledger, in the format of a local archive's:
/// `verify DIR` checks a workers' folder unchanged.
@Suite(.temporaryPostgres) struct ClusterManifestsTests {
    @Test func aManifestListsTheLedgerAndVerifyFindsItAllAsListed() async throws {
        let fixture = try await onThread { try LedgerFixture.make() }
        defer { fixture.remove() }
        try await onThread {
            let connection = try PostgresConnection(fixture.url)
            try fixture.record("b.mp3", body: "second episode", node: "n2", worker: "w2", title: "Second",
                               metadata: #"{"guid": "guid-b", "title": "From the feed", "link": "https://example.com/b"}"#, on: connection)
            try fixture.record("a.mp3", body: "first episode", identity: "id-a", title: nil, metadata: #"{"title": "Only in the metadata"}"#, on: connection)
            try ClusterManifests.write(feeds: [fixture.feed], root: fixture.root, on: connection)
        }
        let manifest = try Manifest.read(in: fixture.root + "/Show")
        #expect(manifest.podcast == "Show" && manifest.feedURL == "https://feeds.example.com/show/rss")
        #expect(manifest.generated.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/) != nil, "\(manifest.generated)")
        #expect(manifest.files.map(\.file) == ["a.mp3", "b.mp3"], "sorted by file")
        let first = try #require(manifest.files.first), second = try #require(manifest.files.last)
        #expect(first.kind == "episode" && first.size == 13 && first.guid == "id-a" && first.title == "Only in the metadata")
        #expect(second.guid == "guid-b" && second.title == "Second", "the metadata's guid, the episode's own title first")
        #expect(second.sha256 == (try FileDigest.sha256(ofFile: fixture.root + "/Show/b.mp3")))
        #expect(second.sourceURL == "https://cdn.example.com/b.mp3" && second.finalURL == "https://cdn.example.com/b.mp3?from=cdn")
        #expect(second.etag == "\"v1\"" && second.lastModified == "Mon, 01 Jan 2024 00:00:00 GMT")
        #expect(second.downloaded?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/) != nil, "\(String(describing: second.downloaded))")
        #expect(first.worker == "w1" && first.node == "n1" && second.worker == "w2" && second.node == "n2")
        let report = try ArchiveVerifier.verify(fixture.root)
        #expect(report.isClean && report.checked == 2 && report.folders == [fixture.root + "/Show"], "\(report)")
        let run = await ClusterCommandTests.monsoon(["verify", fixture.root])
        #expect(run.status == 0 && run.errors == "monsoon: verified 2 files in 1 folder: all as listed\n", "\(run)")
    }

    @Test func aLaterWriterListsTheRowsRecordedSince() async throws {
        let fixture = try await onThread { try LedgerFixture.make(title: nil) }
        defer { fixture.remove() }
        try await onThread {
            let connection = try PostgresConnection(fixture.url)
            try fixture.record("a.mp3", body: "first", on: connection)
            try ClusterManifests.write(feeds: [fixture.feed], root: fixture.root, on: connection)
            #expect(try Manifest.read(in: fixture.root + "/Show").files.map(\.file) == ["a.mp3"])
            try fixture.record("c.mp3", body: "third", on: connection)
            try fixture.record("b.mp3", body: "second", on: connection)
            try ClusterManifests.write(feeds: [fixture.feed], root: fixture.root, on: connection)
        }
        let manifest = try Manifest.read(in: fixture.root + "/Show")
        #expect(manifest.files.map(\.file) == ["a.mp3", "b.mp3", "c.mp3"])
        #expect(manifest.podcast == "feeds.example.com/show/rss", "a feed without a title is named after its URL")
        #expect(try ArchiveVerifier.verify(fixture.root).isClean)
    }

    /// Writers of one feed's manifest take turns under its advisory lock: one that waited reads
    /// what the one before it committed, so the last writes the newest ledger.
    @Test func aWriterWaitsForTheOneBeforeAndReadsWhatItCommitted() async throws {
        let fixture = try await onThread { try LedgerFixture.make() }
        defer { fixture.remove() }
        try await onThread {
            let holder = try PostgresConnection(fixture.url)
            try fixture.record("a.mp3", body: "first", on: holder)
            try holder.executeScript("BEGIN")
            try holder.execute("SELECT pg_advisory_xact_lock($1::integer, $2::integer)", [ClusterManifests.lockClass, fixture.feed])
            try fixture.record("b.mp3", body: "second", on: holder)
            let (url, root, feed) = (fixture.url, fixture.root, fixture.feed)
            let done = DispatchSemaphore(value: 0)
            Thread {
                // A writer that fails writes no manifest, which the last check reads.
                try? ClusterManifests.write(feeds: [feed], root: root, on: PostgresConnection(url))
                done.signal()
            }.start()
            let watcher = try PostgresConnection(fixture.url)
            let deadline = Date().addingTimeInterval(30)
            let waiting = """
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1 AND objid = $2 AND objsubid = 2
                  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """
            while try watcher.execute(waiting, [Int64(ClusterManifests.lockClass), fixture.feed]).first?.int(0) != 1 {
                guard Date() < deadline else { throw PostgresTestError("the second writer never waited for the lock") }
                usleep(10_000)
            }
            #expect(!FileManager.default.fileExists(atPath: root + "/Show/" + Manifest.fileName), "it waits before it writes")
            try holder.executeScript("COMMIT")
            done.wait()
        }
        #expect(try Manifest.read(in: fixture.root + "/Show").files.map(\.file) == ["a.mp3", "b.mp3"])
    }

    /// The newest row of a path is listed (a file downloaded again); a feed without rows gets no
    /// manifest; a folder that would climb out of the root is refused.
    @Test func theNewestRowOfAPathIsListedAndNothingIsWrittenOutside() async throws {
        let fixture = try await onThread { try LedgerFixture.make() }
        defer { fixture.remove() }
        try await onThread {
            let connection = try PostgresConnection(fixture.url)
            try fixture.record("a.mp3", body: "old bytes", identity: "same", on: connection)
            try fixture.record("a.mp3", body: "new bytes!", identity: "same", on: connection)
            let empty = try #require(try connection.execute("INSERT INTO monsoon_feeds (url, folder) VALUES ('https://e.example.com/rss', 'Empty') RETURNING id").first?.int64(0))
            try ClusterManifests.write(feeds: [fixture.feed, empty], root: fixture.root, on: connection)
            #expect(!FileManager.default.fileExists(atPath: fixture.root + "/Empty"))
            try connection.execute("UPDATE monsoon_feeds SET folder = '../Outside' WHERE id = $1", [fixture.feed])
            try connection.execute("UPDATE monsoon_ledger SET path = '../Outside/a.mp3'")
            #expect(throws: EpisodeFileError.self) { try ClusterManifests.write(feeds: [fixture.feed], root: fixture.root, on: connection) }
        }
        let manifest = try Manifest.read(in: fixture.root + "/Show")
        #expect(manifest.files.count == 1 && manifest.files.first?.size == 10)
        #expect(try ArchiveVerifier.verify(fixture.root).isClean)
        #expect(!FileManager.default.fileExists(atPath: (fixture.root as NSString).deletingLastPathComponent + "/Outside"))
    }

    /// The ledger is the files', not the jobs': once the cleaner deletes a finished job, the
    /// manifest and `verify --db` still find its file; a later download of the episode (a new
    /// job) may replace that file, and replaces the episode's row instead of adding one.
    @Test func theLedgerKeepsAFileWhoseJobWasCleanedAway() async throws {
        let fixture = try await onThread { try LedgerFixture.make() }
        defer { fixture.remove() }
        let (enclosure, feedURL) = (try #require(URL(string: "https://cdn.example.com/a.mp3")), try #require(URL(string: "https://feeds.example.com/show/rss")))
        try await onThread {
            let connection = try PostgresConnection(fixture.url)
            let queue = JobQueue(connection: connection, worker: "w1")
            let episode = try #require(try connection.execute("""
                INSERT INTO monsoon_episodes (feed_id, identity, title, enclosure_url, file_name) VALUES ($1, 'g1', 'One', $2, 'a') RETURNING id
                """, [fixture.feed, enclosure.absoluteString]).first?.int64(0))
            // Queued, claimed, its file put in place and recorded, as a worker does.
            func download(_ body: String) throws -> Lease {
                try JobQueue.enqueue([.download(episodeID: episode, feedID: fixture.feed, url: enclosure, feedURL: feedURL, path: "Show/a",
                                                expectedLength: nil, maxBytes: nil, priority: 0)], on: connection)
                let job = try #require(try queue.claim(slots: 1).first)
                #expect(job.url == enclosure.absoluteString && job.feedURL == feedURL.absoluteString && job.path == "Show/a")
                #expect(try !queue.recordsAnother("Show/a.mp3", than: job.lease), "an earlier file of its own episode is its to replace")
                try fixture.write("Show/a.mp3", Data(body.utf8))
                let entry = LedgerEntry(lease: job.lease, path: "Show/a.mp3", size: Int64(body.utf8.count), sha256: try FileDigest.sha256(ofFile: fixture.root + "/Show/a.mp3"),
                                        finalURL: nil, etag: nil, lastModified: nil, node: "n1")
                #expect(try queue.complete([entry]) == [job.lease])
                return job.lease
            }
            // The cleaner's statement, with an age of nothing: every finished job goes.
            let clean = "DELETE FROM monsoon_jobs WHERE state IN ('completed','failed','dead') AND finished_at < clock_timestamp()"
            let first = try download("first bytes")
            #expect(try connection.execute(clean).affectedRows == 1)
            #expect(try queue.recordsAnother("Show/a.mp3", than: Lease(job: first.job + 1000, token: 1)), "another episode's job may not replace it")
            try ClusterManifests.write(feeds: [fixture.feed], root: fixture.root, on: connection)
            #expect(try Manifest.read(in: fixture.root + "/Show").files.map { [$0.file, String($0.size)] } == [["a.mp3", "11"]])
            let report = try ClusterVerifier.verify(fixture.root, node: nil, on: connection)
            #expect(report.isClean && report.checked == 1, "\(report)")

            let second = try download("second bytes, longer")
            #expect(second.job != first.job)
            #expect(try connection.execute(clean).affectedRows == 1)
            let rows = try connection.execute("SELECT job_id, episode_id, size FROM monsoon_ledger").rows.map(\.values)
            #expect(rows == [["\(second.job)", "\(episode)", "20"]])
            try ClusterManifests.write(feeds: [fixture.feed], root: fixture.root, on: connection)
            #expect(try Manifest.read(in: fixture.root + "/Show").files.map { [$0.file, String($0.size)] } == [["a.mp3", "20"]])
            #expect(try ClusterVerifier.verify(fixture.root, node: nil, on: connection).isClean)
        }
    }

    /// A manifest written before `worker` and `node` were added reads as before, and a local
    /// archive's entries (without them) are written without them: the format is unchanged.
    @Test func entriesWithoutWorkerAndNodeKeepTheirFormat() throws {
        let old = #"{"podcast": "P", "feedURL": "https://e.example.com/rss", "generated": "2024-01-01T00:00:00Z", "files": [{"kind": "episode", "file": "a.mp3", "size": 1, "sha256": "00"}]}"#
        let manifest = try Manifest.decode(Data(old.utf8), path: "m.json")
        #expect(manifest.files.first?.worker == nil && manifest.files.first?.node == nil)
        let folder = NSTemporaryDirectory() + "monsoon-manifest-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try manifest.write(in: folder)
        let text = try String(contentsOfFile: folder + "/" + Manifest.fileName, encoding: .utf8)
        #expect(!text.contains("worker") && !text.contains("node"), "\(text)")
    }
}
