import Foundation
import MonsoonCLI
@testable import MonsoonCluster
import MonsoonTestServer
import Testing

/// Feeds added to the shared library (`SharedLibrary.addFeeds`, `monsoon archive --db`): one row
/// per feed and one refresh job per feed however many add them at once, the latest rules kept,
/// a finished refresh queued again.
@Suite(.temporaryPostgres) struct SharedLibraryTests {
    static let feeds = ["https://feeds.example.com/a.xml", "https://feeds.example.com/b.xml", "https://other.example.com/c.xml"]

    @Test func archivesRunAtOnceQueueOneRefreshPerFeed() async throws {
        let fixture = try await SharedLibraryFixture()
        let url = fixture.url
        async let first = ClusterCommandTests.monsoon(["archive", "--db", url] + Self.feeds)
        async let second = ClusterCommandTests.monsoon(["archive", "--db", url] + Self.feeds.reversed())
        async let third = ClusterCommandTests.monsoon(["archive", "--db", url, Self.feeds[1]])
        let runs = await [first, second, third]
        for run in runs { #expect(run.status == 0, "\(run.errors)") }
        let lines = runs.flatMap { $0.output.split(separator: "\n").map(String.init) }
        for feed in Self.feeds {
            #expect(lines.filter { $0 == "queued refresh of \(feed)" }.count == 1, "\(lines)")
        }
        #expect(lines.filter { $0.hasPrefix("refresh already queued: ") }.count == 4)
        #expect(runs.allSatisfy { $0.errors.hasPrefix("monsoon: shared library \(fixture.url): ") })
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_feeds") == 3)
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_jobs WHERE kind = 'refresh' AND key = 'refresh:' || feed_id AND state = 'available'") == 3)
        #expect(try await fixture.count("SELECT ready FROM monsoon_hosts WHERE host = 'feeds.example.com'") == 2)
    }

    /// A refresh that finished is queued again by the next archive of its feed, which also
    /// replaces its rules; one waiting is left as it is.
    @Test func aFinishedRefreshIsQueuedAgainWithTheLatestRules() async throws {
        let fixture = try await SharedLibraryFixture()
        let url = try #require(URL(string: Self.feeds[0]))
        let added = try #require(try await fixture.add([url, url], rules: ArchiveRules(match: "one")).first)
        #expect(added.isNew && added.refreshQueued)
        #expect(try await fixture.add([url]).first == .init(feedID: added.feedID, url: url, isNew: false, refreshQueued: false))
        let job = try await fixture.claimRefresh(of: added.feedID)
        #expect(try await onThread { try fixture.queue.fail(job.lease, reason: "gone") })
        let again = try await fixture.add([url], rules: ArchiveRules(latest: 3, newestFirst: true))
        #expect(again == [.init(feedID: added.feedID, url: url, isNew: false, refreshQueued: true)])
        let row = try await onThread {
            try #require(try fixture.queue.connection.execute("SELECT state, attempts, last_error, finished_at FROM monsoon_jobs WHERE feed_id = $1", [added.feedID]).first)
        }
        #expect(try row.string(0) == "available" && row.int(1) == 0 && row.string(2) == nil && row.string(3) == nil)
        #expect(try await fixture.count("SELECT ready FROM monsoon_hosts WHERE host = 'feeds.example.com'") == 1)
        let rules = try await onThread { try fixture.queue.connection.execute("SELECT rules::text FROM monsoon_feeds").first?.string(0) }
        #expect(rules == #"{"latest": 3, "newestFirst": true, "portableNames": false}"#)
        #expect(try ArchiveRules(json: rules ?? "") == ArchiveRules(latest: 3, newestFirst: true))
    }

    @Test func rulesThatCannotBeKeptAreRefusedBeforeAnythingIsWritten() async throws {
        let fixture = try await SharedLibraryFixture()
        let url = try #require(URL(string: Self.feeds[0]))
        for (rules, message) in [(ArchiveRules(match: "("), "'(' given to --match is not a regular expression"),
                                 (ArchiveRules(template: "{title}.{ext}"), "the template '{title}.{ext}' must start with '{podcast}/'"),
                                 (ArchiveRules(latest: 0), "--latest must be at least 1")] {
            await #expect { try await fixture.add([url], rules: rules) } throws: { error in
                (error as? SharedLibraryError)?.code == .invalidRules && "\(error)".hasPrefix(message)
            }
        }
        await #expect { try await fixture.add([URL(string: "ftp://example.com/feed.xml")!]) } throws: { ($0 as? SharedLibraryError)?.code == .invalidFeedURL }
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_feeds") == 0)
    }

    @Test func archiveWithDBRefusesWhatOnlyALocalRunDoes() async throws {
        let fixture = try await SharedLibraryFixture()
        for (options, message) in [(["--all"], "--all cannot be used with --db"), (["-o", "/tmp"], "--out cannot be used with --db"),
                                   (["--dry-run"], "--dry-run cannot be used with --db"), (["-j", "3"], "--jobs cannot be used with --db"),
                                   (["--match", "("], "'(' given to --match is not a regular expression"),
                                   (["--template", "{year}/{podcast}.{ext}"], "the template '{year}/{podcast}.{ext}' must start with '{podcast}/'")] {
            let run = await ClusterCommandTests.monsoon(["archive", "--db", fixture.url, Self.feeds[0]] + options)
            #expect(run.status == 2 && run.output == "", "\(options): \(run.errors)")
            #expect(run.errors.hasPrefix("monsoon: \(message)"), "\(options): \(run.errors)")
        }
        #expect(try await fixture.count("SELECT count(*) FROM monsoon_feeds") == 0)
    }

    @Test func jsonSaysWhatWasQueued() async throws {
        let fixture = try await SharedLibraryFixture()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-opml-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let opml = """
            <?xml version="1.0"?><opml version="2.0"><body>
            <outline text="B" type="rss" xmlUrl="\(Self.feeds[1])"/><outline text="C" type="rss" xmlUrl="\(Self.feeds[2])"/>
            </body></opml>
            """
        try Data(opml.utf8).write(to: URL(fileURLWithPath: folder + "/list.opml"))
        _ = try await fixture.add([URL(string: Self.feeds[1])!])
        let run = await ClusterCommandTests.monsoon(["archive", "--db", fixture.url, "--json", "--opml", folder + "/list.opml", Self.feeds[0]])
        #expect(run.status == 0 && run.errors == "", "\(run.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "queued" && object["database"] as? String == fixture.url)
        #expect(object["newFeeds"] as? Int == 2 && object["queued"] as? Int == 2 && object["alreadyQueued"] as? Int == 1)
        let feeds = try #require(object["feeds"] as? [[String: Any]])
        #expect(feeds.map { $0["url"] as? String } == [Self.feeds[0], Self.feeds[1], Self.feeds[2]])
        #expect(feeds.map { $0["queued"] as? Bool } == [true, false, true])
    }

    /// MONSOON_DB alone never makes an archive a shared one: it runs here as before.
    @Test func monsoonDBAloneLeavesArchiveLocal() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.setRoute("/feed.xml", feedRoute(rssFeed([TestItem("a", "One", "1.mp3", day: 1)])))
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-home-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let run = await ClusterCommandTests.monsoon(["archive", "--home", home, "--dry-run", server.url("/feed.xml").absoluteString, "-o", home + "/archive"],
                                                    environment: ["MONSOON_DB": "postgresql://nobody@127.0.0.1:1/none"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.hasPrefix("Show ("), "\(run.output)")
    }
}
