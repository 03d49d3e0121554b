import Foundation
import MonsoonEngine
import MonsoonStore
import Testing
@testable import MonsoonPodcasts

private enum FileColumn: Int, TableColumn { case fileURL, fileLength, version }

/// Versions of an episode: what counts as a new one, how it is named, and libraries from before.
@Suite struct EpisodeVersionTests {
    let archived = VersionCheck.Archived(url: "https://cdn.example.com/show/ep1.mp3", length: 5_000_000, fileSize: 5_000_000,
                                         etag: "\"abc\"", lastModified: "Mon, 01 Jan 2024 10:00:00 GMT")

    @Test func nothingIsAskedWhileTheEnclosureIsTheSameOrOnlyItsNoiseChanged() {
        func before(_ url: String, _ length: Int?) -> VersionCheck.Verdict { VersionCheck.before(archived, listed: .init(url: url, length: length)) }
        #expect(before(archived.url, 5_000_000) == .unchanged)
        // A length that says nothing (missing, 0), or the file's own size: recorded, not asked about.
        #expect(before(archived.url, nil) == .sameFile && before(archived.url, 0) == .sameFile)
        var wrong = archived
        wrong.length = 1
        #expect(VersionCheck.before(wrong, listed: .init(url: wrong.url, length: 5_000_000)) == .sameFile)
        // A tracking prefix or a redirector: the same file name, declaring the file's own size.
        #expect(before("https://dts.podtrac.com/redirect.mp3/cdn.example.com/show/ep1.mp3", 5_000_000) == .sameFile)
        // A new signature (only the query changed), with the same length or none at all.
        #expect(before("https://cdn.example.com/show/ep1.mp3?sig=new&expires=2", 5_000_000) == .sameFile)
        #expect(before("https://cdn.example.com/show/ep1.mp3?sig=new&expires=2", nil) == .sameFile)
        #expect(before("https://CDN.example.com/show/ep1.mp3?sig=3", 0) == .sameFile)
        // Not an http(s) URL: never asked about.
        #expect(before("ftp://example.com/ep1.mp3", 7) == .unchanged)
    }

    @Test func theServerIsAskedWhenTheURLOrTheLengthChanged() {
        func before(_ url: String, _ length: Int?) -> VersionCheck.Verdict { VersionCheck.before(archived, listed: .init(url: url, length: length)) }
        #expect(before(archived.url, 6_000_000) == .ask)
        #expect(before("https://cdn.example.com/show/ep1-v2.mp3", 6_000_000) == .ask)
        // The same file name with no length to go by, or another length: asked too.
        #expect(before("https://other.example.com/ep1.mp3", 0) == .ask)
        #expect(before("https://other.example.com/ep1.mp3", 6_000_000) == .ask)
        // Only the query changed, but another length: asked; so is another path or host with the query.
        #expect(before("https://cdn.example.com/show/ep1.mp3?sig=new", 6_000_000) == .ask)
        #expect(before("https://cdn.example.com/show/ep1-v2.mp3?sig=new", nil) == .ask)
        #expect(before("http://cdn.example.com/show/ep1.mp3?sig=new", nil) == .ask)
        // A feed that declares one wrong length for every version: the same name with that length is
        // no proof (only the file's real size is), so a re-edit under a new prefix is asked about.
        let bogus = VersionCheck.Archived(url: "https://cdn.example.com/show/ep1.mp3", length: 1_000, fileSize: 5_000_000, etag: nil, lastModified: nil)
        #expect(VersionCheck.before(bogus, listed: .init(url: "https://cdn.example.com/v2/ep1.mp3", length: 1_000)) == .ask)
        #expect(VersionCheck.before(bogus, listed: .init(url: "https://cdn.example.com/v2/ep1.mp3", length: 5_000_000)) == .sameFile)
    }

    @Test func theServersAnswerDecides() {
        func after(_ status: Int, _ length: Int?, _ etag: String?, _ modified: String?) -> VersionCheck.Verdict {
            VersionCheck.after(archived, answer: .init(status: status, length: length, etag: etag, lastModified: modified))
        }
        #expect(after(200, 6_000_000, "\"abc\"", nil) == .newVersion("the server's file is 6000000 bytes, the archived one 5000000"))
        #expect(after(200, 5_000_000, "\"xyz\"", nil) == .newVersion("its ETag changed"))
        #expect(after(200, 5_000_000, "W/\"abc\"", "Tue, 02 Jan 2024 10:00:00 GMT") == .sameFile, "a weakened ETag is the same one; it wins over the date")
        #expect(after(200, nil, nil, "Tue, 02 Jan 2024 10:00:00 GMT") == .newVersion("its Last-Modified changed"))
        // Nothing to compare is never a new version; an error is no answer.
        #expect(after(200, nil, nil, nil) == .sameFile && after(200, 5_000_000, nil, nil) == .sameFile)
        guard case .unknown = after(404, nil, nil, nil) else { Issue.record("a 404 decides nothing"); return }
        // A success that cannot be the file (empty, or a web page: a soft 404) decides nothing either.
        #expect(after(200, 0, "\"xyz\"", nil) == .unknown("the server answered 200 with an empty file"))
        let page = VersionCheck.after(archived, answer: .init(status: 200, length: 1_234, etag: "\"xyz\"", lastModified: nil, contentType: "text/html; charset=utf-8"))
        #expect(page == .unknown("the server answered 200 with a web page, not the episode's file"))
    }

    @Test func versionsAreNamedWithTheDayTheyWereSeen() throws {
        let day = Date(timeIntervalSince1970: 1_796_083_200)   // 2026-12-01 00:00 UTC
        #expect(EpisodeVersion.name(seen: day, taken: []) == "2026-12-01")
        #expect(EpisodeVersion.name(seen: day, taken: ["2026-12-01"]) == "2026-12-01-2")
        #expect(EpisodeVersion.name(seen: day, taken: ["2026-12-01", "2026-12-01-2"]) == "2026-12-01-3")

        let published = Date(timeIntervalSince1970: 1_700_000_000)
        func stem(_ template: NamingTemplate, _ version: String?, title: String = "Talk") -> String {
            template.render(NamingValues(podcast: "Show", title: title, published: published, guid: "g", season: nil, episode: nil, version: version)).stem
        }
        let explicit = try NamingTemplate("{podcast}/{date} - {title}{version}.{ext}")
        #expect(stem(explicit, nil) == "2023-11-14 - Talk" && stem(explicit, "2026-12-01") == "2023-11-14 - Talk (2026-12-01)")
        // In a folder, {version} is there and only there.
        let folder = try NamingTemplate("{podcast}/v{version}/{title}.{ext}")
        let rendered = folder.render(NamingValues(podcast: "Show", title: "Talk", published: published, guid: "g", season: nil, episode: nil, version: "2026-12-01"))
        #expect(rendered.folders == ["Show", "v (2026-12-01)"] && rendered.stem == "Talk")
        let first = try NamingTemplate("{podcast}/{version} {title}.{ext}")
        #expect(stem(first, nil) == "Talk" && stem(first, "2026-12-01") == "(2026-12-01) Talk")
        // A template without {version} still names a later version apart, even when the title is cut.
        #expect(stem(.standard, nil) == "2023-11-14 - Talk" && stem(.standard, "2026-12-01-2") == "2023-11-14 - Talk (2026-12-01-2)")
        let long = stem(.standard, "2026-12-01", title: String(repeating: "é", count: 300))
        #expect(long.hasSuffix(" (2026-12-01)") && long.utf8.count <= NamingTemplate.stemLimit)
    }

    @Test func aLibraryFromBeforeVersionsUpgrades() throws {
        let path = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-versions-\(UUID().uuidString).db"
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let old = try Database(path: path)
            try Migrator(component: "library", Array(LibrarySchema.migrator.migrations.prefix(3))).migrate(old)
            try old.run("INSERT INTO podcasts (id, feed_url, title, added) VALUES (1, 'https://example.com/feed.xml', 'Show', 0)")
            try old.run("""
                INSERT INTO episodes (id, podcast_id, identity, guid, title, enclosure_url, declared_length, download_state, file_name, bytes_on_disk,
                    archived_at, etag, sha256)
                VALUES (7, 1, 'g1', 'g1', 'Talk', 'https://example.com/ep1.mp3', 1234, 'downloaded', '/archive/Show/Talk.mp3', 1234, 1700000000, '"e1"', 'ab'),
                       (8, 1, 'g2', 'g2', 'Later', 'https://example.com/ep2.mp3', 99, 'none', NULL, 0, NULL, NULL, NULL)
                """)
        }
        let database = try Database(path: path)
        _ = try EpisodeQueue(database: database)
        #expect(try LibrarySchema.migrator.version(of: database) == LibrarySchema.migrator.latestVersion)
        let row = try database.statement("SELECT file_url, file_length, version FROM episodes WHERE id = 7").first(reading: FileColumn.self) { ($0.text(.fileURL), $0.optionalInt(.fileLength), $0.text(.version)) }
        #expect(row?.0 == "https://example.com/ep1.mp3" && row?.1 == 1234 && row?.2 == nil)
        #expect(try database.scalarInt("SELECT count(*) FROM episode_versions") == 0)
        // The episode downloaded before is its first version; the other has none yet.
        let library = try PodcastLibrary(database: database, manager: DownloadManager())
        let versions = try library.versions(ofPodcast: 1)
        #expect(versions[8] == nil && versions[7]?.count == 1)
        let first = try #require(versions[7]?.first)
        #expect(first.name == nil && first.status == .current && first.url == "https://example.com/ep1.mp3" && first.etag == "\"e1\"" && first.sha256 == "ab")
        #expect(first.seen == Date(timeIntervalSince1970: 1_700_000_000))
    }
}

extension EpisodeVersionTests {
    @Test func anEarlierFileThatCannotBeReadLeavesItsEpisodeAsItWas() throws {
        let folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-versions-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let readable = folder + "/Talk 2.mp3"
        try Data("second".utf8).write(to: URL(fileURLWithPath: readable))
        let database = try Database(path: folder + "/library.db")
        let queue = try EpisodeQueue(database: database)
        try database.run("INSERT INTO podcasts (id, feed_url, title, added) VALUES (1, 'https://example.com/feed.xml', 'Show', 0)")
        // Episode 7's file is a regular file whose reading fails (as root, no permission can make one).
        try database.run("""
            INSERT INTO episodes (id, podcast_id, identity, guid, title, enclosure_url, declared_length, download_state, file_name, bytes_on_disk,
                archived_at, file_url)
            VALUES (7, 1, 'g1', 'g1', 'Talk', 'https://example.com/ep1.mp3', 1, 'downloaded', '/proc/self/mem', 1, 1700000000, 'https://example.com/ep1.mp3'),
                   (8, 1, 'g2', 'g2', 'Talk 2', 'https://example.com/ep2.mp3', 6, 'downloaded', ?, 6, 1700000000, 'https://example.com/ep2.mp3')
            """, readable)
        let skipped = try queue.startNewVersions([7, 8])
        #expect(skipped.keys.sorted() == [7] && skipped[7]?.contains("cannot read /proc/self/mem") == true, "\(skipped)")
        #expect(try database.scalarText("SELECT download_state FROM episodes WHERE id = 7") == "downloaded")
        #expect(try database.scalarText("SELECT download_state FROM episodes WHERE id = 8") == "none")
        #expect(try database.scalarInt("SELECT count(*) FROM episode_versions WHERE episode_id = 8 AND sha256 IS NOT NULL") == 1)
        #expect(try database.scalarInt("SELECT count(*) FROM episode_versions WHERE episode_id = 7") == 0)
    }
}
