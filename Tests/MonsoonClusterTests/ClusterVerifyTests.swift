import Foundation
@testable import MonsoonCluster
import MonsoonPodcasts
import Testing

/// `monsoon verify --db URL DIR`: a workers' folder against the ledger, run in-process.
@Suite(.temporaryPostgres) struct ClusterVerifyTests {
    /// Three files on two nodes, their manifest, and a part in the work folder (neither is extra).
    static func threeFiles() async throws -> LedgerFixture {
        let fixture = try await onThread { try LedgerFixture.make() }
        try await onThread {
            let connection = try PostgresConnection(fixture.url)
            try fixture.record("a.mp3", body: "episode a", node: "n1", on: connection)
            try fixture.record("b.mp3", body: "episode b", node: "n2", on: connection)
            try fixture.record("2024/c.mp3", body: "episode c", node: "n2", on: connection)
            try ClusterManifests.write(feeds: [fixture.feed], root: fixture.root, on: connection)
        }
        try fixture.write(".monsoon-work/j9-t1.mp3.part", Data("half".utf8))
        return fixture
    }

    @Test func aCleanFolderIsAllAsListed() async throws {
        let fixture = try await Self.threeFiles()
        defer { fixture.remove() }
        let run = await ClusterCommandTests.monsoon(["verify", "--db", fixture.url, fixture.root])
        #expect(run.status == 0 && run.output == "", "\(run)")
        #expect(run.errors == "monsoon: verified 3 files in 1 folder: all as listed\n", "\(run)")
        let quiet = await ClusterCommandTests.monsoon(["verify", "--db", fixture.url, fixture.root, "--quiet"])
        #expect(quiet.status == 0 && quiet.output == "" && quiet.errors == "", "\(quiet)")
    }

    @Test func missingChangedExtraAndLinksAreListed() async throws {
        let fixture = try await Self.threeFiles()
        defer { fixture.remove() }
        let show = fixture.root + "/Show"
        unlink(show + "/a.mp3")
        try fixture.write("Show/2024/c.mp3", Data("episode C".utf8))   // as long, one byte flipped
        try fixture.write("Show/notes.txt", Data("mine".utf8))
        unlink(show + "/b.mp3")
        try FileManager.default.createSymbolicLink(atPath: show + "/b.mp3", withDestinationPath: "/etc/hostname")
        let run = await ClusterCommandTests.monsoon(["verify", "--db", fixture.url, fixture.root])
        #expect(run.status == 1, "\(run)")
        #expect(run.output == "missing \(show)/a.mp3\nchanged \(show)/2024/c.mp3\nextra   \(show)/notes.txt\nlink    \(show)/b.mp3\n", "\(run)")
        #expect(run.errors == "monsoon: verified 3 files in 1 folder: 1 missing, 1 changed, 1 extra, 1 symbolic link (not followed)\n", "\(run)")
        // As JSON, with the keys of `verify`.
        let json = await ClusterCommandTests.monsoon(["verify", "--db", fixture.url, fixture.root, "--json"])
        #expect(json.status == 1 && json.errors == "", "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["folders", "checked", "missing", "changed", "extra", "links", "unreadable", "withoutFeed", "outside"])
        #expect(object["folders"] as? [String] == [show] && object["checked"] as? Int == 3)
        #expect(object["missing"] as? [String] == [show + "/a.mp3"] && object["changed"] as? [String] == [show + "/2024/c.mp3"])
        #expect(object["extra"] as? [String] == [show + "/notes.txt"] && object["links"] as? [String] == [show + "/b.mp3"])
    }

    /// With --node, the files of that machine only, and no extra files (the others' are there).
    @Test func nodeChecksOneMachinesFilesOnly() async throws {
        let fixture = try await Self.threeFiles()
        defer { fixture.remove() }
        unlink(fixture.root + "/Show/a.mp3")
        try fixture.write("Show/notes.txt", Data("mine".utf8))
        let second = await ClusterCommandTests.monsoon(["verify", "--db", fixture.url, fixture.root, "--node", "n2"])
        #expect(second.status == 0 && second.errors == "monsoon: verified 2 files in 1 folder: all as listed\n", "\(second)")
        let first = await ClusterCommandTests.monsoon(["verify", "--db", fixture.url, fixture.root, "--node", "n1"])
        #expect(first.status == 1 && first.output == "missing \(fixture.root)/Show/a.mp3\n", "\(first)")
        let none = await ClusterCommandTests.monsoon(["verify", "--db", fixture.url, fixture.root, "--node", "n9"])
        #expect(none.status == 0 && none.errors == "monsoon: verified 0 files in 0 folders: all as listed\n", "\(none)")
    }

    /// Pages of the ledger in the order of its paths, files looked up in batches: the same
    /// report at any page size; a path recorded twice counts once, as its newest row says.
    @Test func pagesAndBatchesGiveTheSameReport() async throws {
        let fixture = try await onThread { try LedgerFixture.make() }
        defer { fixture.remove() }
        let reports = try await onThread {
            let connection = try PostgresConnection(fixture.url)
            for index in 0..<7 { try fixture.record("e\(index).mp3", body: "episode \(index)", on: connection) }
            try fixture.record("e3.mp3", body: "episode 3, again", on: connection)   // the same episode recorded again: its newest row counts
            try fixture.record("e7.mp3", body: "never here", write: false, on: connection)
            try fixture.write("Show/x.mp3", Data("extra".utf8))
            return try [1, 2, 3, 10_000].map { try ClusterVerifier.verify(fixture.root, node: nil, on: connection, pageSize: $0) }
        }
        let show = fixture.root + "/Show"
        for report in reports {
            #expect(report.checked == 8 && report.missing == [show + "/e7.mp3"] && report.changed == [] && report.extra == [show + "/x.mp3"], "\(report)")
        }
    }

    @Test func badCommandLinesAreUsageErrors() async throws {
        let cases: [([String], String)] = [
            (["verify", "--db", "postgresql://127.0.0.1/x", "/tmp", "--repair"], "monsoon: --repair works with manifests; run it without --db\n"),
            (["verify", "--node", "n1", "/tmp"], "monsoon: --node works with --db only\n"),
            (["verify", "--db", "postgresql://127.0.0.1/x"], "monsoon: give the workers' folder: monsoon verify --db URL DIR\n"),
            (["verify", "--db", "", "/tmp"], "monsoon: --db needs the database's URL\n"),
        ]
        for (arguments, message) in cases {
            let run = await ClusterCommandTests.monsoon(arguments, environment: ["MONSOON_DB": "postgresql://127.0.0.1/ignored"])
            #expect(run.status == 2 && run.output == "", "\(arguments): \(run)")
            #expect(run.errors.hasPrefix(message) && run.errors.contains("Usage: monsoon verify"), "\(arguments): \(run.errors)")
        }
    }

    @Test func aDatabaseWithoutTheSchemaOrAFolderThatIsNotThereFails() async throws {
        let url = try await onThread { try temporaryPostgres().createDatabase() }
        let folder = NSTemporaryDirectory() + "monsoon-verify-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let bare = await ClusterCommandTests.monsoon(["verify", "--db", url, folder])
        #expect(bare.status == 1 && bare.errors == "monsoon: the database has no cluster schema (or an older one): run 'monsoon cluster init --db …' first\n", "\(bare)")
        let missing = await ClusterCommandTests.monsoon(["verify", "--db", url, folder + "/nothing"])
        #expect(missing.status == 1 && missing.errors == "monsoon: no such folder: \(folder)/nothing\n", "\(missing)")
    }
}
