import Foundation
import Testing
@testable import MonsoonPodcasts

/// One fixture file and what parsing it must give: an episode count (after duplicates are left out)
/// with spot checks, or a specific typed error. The rows are in FeedFixtureManifestTests.swift.
struct FixtureRow: Sendable, CustomTestStringConvertible {
    struct FirstEpisode: Sendable {
        var guid: String?
        var url: String?
        var published: String?
        var duration: Int?
    }

    enum Outcome: Sendable {
        case parses(count: Int, duplicates: Int, title: String?, first: FirstEpisode?)
        case fails(FeedError.Code)
    }

    let path: String
    let outcome: Outcome

    init(_ path: String, count: Int, duplicates: Int = 0, title: String? = nil, first: FirstEpisode? = nil) {
        self.path = path
        outcome = .parses(count: count, duplicates: duplicates, title: title, first: first)
    }

    init(_ path: String, fails code: FeedError.Code) {
        self.path = path
        outcome = .fails(code)
    }

    var testDescription: String { path }
}

@Suite struct FeedFixtureTests {
    @Test(arguments: fixtureManifest)
    func fixture(_ row: FixtureRow) throws {
        let result = Result { () throws(FeedError) in try FeedParser.parse(fileAt: fixturePath(row.path)) }
        switch (row.outcome, result) {
        case (.parses(let count, let duplicates, let title, let first), .success(let feed)):
            #expect(feed.episodes.count == count)
            #expect(feed.duplicateCount == duplicates)
            #expect(feed.title == title)
            if let first {
                let episode = try #require(feed.episodes.first)
                #expect(episode.guid == first.guid)
                #expect(episode.enclosureURL?.absoluteString == first.url)
                #expect(utc(episode.published) == first.published)
                #expect(episode.duration == first.duration)
            }
            // Every episode has an identity, and identities are unique.
            #expect(feed.episodes.allSatisfy { !$0.identity.isEmpty })
            #expect(Set(feed.episodes.map(\.identity)).count == feed.episodes.count)
        case (.fails(let code), .failure(let error)):
            #expect(error.code == code, "\(error.message)")
            #expect(!error.message.isEmpty && !error.message.contains("\n"))
            if code == .malformed {
                #expect((error.line ?? 0) > 0 && (error.column ?? 0) > 0)
            }
        case (.parses, .failure(let error)):
            Issue.record("expected to parse, failed with \(error.code): \(error.message)")
        case (.fails(let code), .success(let feed)):
            Issue.record("expected \(code), parsed \(feed.episodes.count) episodes")
        }
    }

    /// Refreshes parse many feeds at once: parses on several threads give the same results as alone.
    @Test func concurrentParsesAgree() async throws {
        let paths = ["node-podcast-parser/se-radio.xml", "partytime/real-world/no-agenda.xml", "synthetic/latin1_declared.xml",
                     "synthetic/utf16_podcast.xml", "partytime/real-world/sentimental-garbage.xml", "synthetic/atom_podcast.xml"]
        let alone = try paths.map { try parseFixture($0) }
        let together = try await withThrowingTaskGroup(of: (Int, ParsedFeed).self) { group in
            for _ in 0..<4 {
                for (index, path) in paths.enumerated() {
                    group.addTask { (index, try FeedParser.parse(fileAt: fixturePath(path))) }
                }
            }
            var results: [(Int, ParsedFeed)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(together.count == paths.count * 4)
        for (index, feed) in together { #expect(feed == alone[index]) }
    }

    /// Every file copied into Tests/Fixtures/feeds is covered by a row, and every row names a file there.
    @Test func manifestCoversEveryFixture() throws {
        var files = Set<String>()
        let enumerator = try #require(FileManager.default.enumerator(atPath: feedFixtures.path))
        while let relative = enumerator.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: fixturePath(relative), isDirectory: &isDirectory)
            if isDirectory.boolValue || name == "SOURCES.md" || name.hasPrefix("LICENSE") || name.hasPrefix("COPYING") { continue }
            files.insert(relative)
        }
        let rows = Set(fixtureManifest.map(\.path))
        #expect(rows.count == fixtureManifest.count, "a file is listed twice")
        #expect(files.subtracting(rows).sorted() == [], "fixtures without a row")
        #expect(rows.subtracting(files).sorted() == [], "rows without a fixture")
        #expect(files.count >= 160)
    }
}
