import Foundation
import Testing
@testable import MonsoonPodcasts

/// The streaming parse hands out exactly what the whole parse keeps, in the same order, whatever
/// the batch size; inspect's streamed JSON is the same bytes.
@Suite struct FeedStreamTests {
    /// Streams the fixture in batches of `batchSize`; the episodes put back together.
    static func streamed(_ path: String, batchSize: Int) throws -> (feed: ParsedFeed, batches: Int) {
        var episodes: [ParsedEpisode] = []
        var batches = 0
        var feed = try FeedParser.parse(fileAt: path, batchSize: batchSize) { batch, soFar in
            #expect(!batch.isEmpty && batch.count <= batchSize)
            #expect(soFar.episodes.isEmpty)
            episodes += batch
            batches += 1
        }
        #expect(feed.episodes.isEmpty)
        feed.episodes = episodes
        return (feed, batches)
    }

    @Test(arguments: fixtureManifest)
    func aStreamedParseGivesWhatTheWholeParseKeeps(_ row: FixtureRow) throws {
        let path = fixturePath(row.path)
        let whole = Result { () throws(FeedError) in try FeedParser.parse(fileAt: path) }
        for batchSize in [1, 3, 1000] {
            switch whole {
            case .success(let feed):
                let (streamed, batches) = try Self.streamed(path, batchSize: batchSize)
                #expect(streamed == feed, "batches of \(batchSize)")
                #expect(batches == (feed.episodes.count + batchSize - 1) / batchSize)
            case .failure(let error):
                #expect(throws: error) { _ = try Self.streamed(path, batchSize: batchSize) }
            }
        }
    }

    @Test(arguments: fixtureManifest)
    func inspectJSONStreamsTheSameBytes(_ row: FixtureRow) throws {
        // The fixtures meant to fail print no JSON (FeedFixtureTests checks that they fail); any
        // other that fails to parse fails this test, never passes it unseen.
        guard case .parses = row.outcome else { return }
        let feed = try FeedParser.parse(fileAt: fixturePath(row.path))
        for chunkSize in [1, 100, 256 << 10] {
            var written = Data()
            var chunks = 0
            var writer = InspectJSONWriter(chunkSize: chunkSize) { written.append($0); chunks += 1 }
            let metadata = try FeedParser.parse(fileAt: fixturePath(row.path), batchSize: 2) { batch, soFar in writer.add(batch, feed: soFar) }
            writer.finish(metadata)
            #expect(written == feed.inspectJSON(), "chunks of \(chunkSize)")
            if chunkSize == 256 << 10 && written.count < chunkSize { #expect(chunks == 1, "a small feed is written in one piece") }
        }
    }

    /// A control character XML forbids makes libxml2 stop; the cleaned text is parsed again, going
    /// on after the items already handed out: none is handed out twice or lost, and those read in
    /// CDATA sections (which libxml2 never sees) before the stop read as the cleaned text reads them.
    @Test(arguments: [1, 2, 1000])
    func aParseAgainAfterAControlCharacterHandsOutNothingTwice(batchSize: Int) throws {
        var items = ""
        for number in 0..<6 {
            let title = number == 1 ? "<![CDATA[One\u{0B} in CDATA]]>" : number == 3 ? "Three\u{0B}"
                : number == 4 ? "<![CDATA[Four\u{1F} in CDATA]]>" : "Item \(number)"
            items += "<item><guid>g\(number)</guid><title>\(title)</title></item>\n"
        }
        items += "<item><guid>g1</guid><title>Repeat</title></item>\n"
        let data = Data(rss(items).utf8)
        let url = URL(string: "https://feeds.example.org/feed.xml")!
        let whole = try FeedParser.parse(data, url: url)
        #expect(whole.episodes.compactMap(\.title) == ["Item 0", "One in CDATA", "Item 2", "Three", "Four in CDATA", "Item 5"])
        #expect(whole.duplicateCount == 1)
        var episodes: [ParsedEpisode] = []
        var streamed = try FeedParser.parse(data, url: url, batchSize: batchSize) { batch, _ in episodes += batch }
        streamed.episodes = episodes
        #expect(streamed == whole)
    }

    /// libxml2 never sees a CDATA section: a control character in one alone is kept, as it always was.
    @Test func aControlCharacterInCDATAAloneIsKept() throws {
        let data = Data(rss("<item><guid>g</guid><title><![CDATA[One\u{0B}]]></title></item>").utf8)
        let url = URL(string: "https://feeds.example.org/feed.xml")!
        #expect(try FeedParser.parse(data, url: url).episodes.first?.title == "One\u{0B}")
        var titles: [String?] = []
        _ = try FeedParser.parse(data, url: url, batchSize: 1) { batch, _ in titles += batch.map(\.title) }
        #expect(titles == ["One\u{0B}"])
    }

    /// What the sink throws stops the parse and is thrown as it is.
    @Test func aSinkErrorStopsTheParse() throws {
        struct Full: Error, Equatable {}
        let data = Data(rss((0..<10).map { "<item><guid>\($0)</guid></item>" }.joined()).utf8)
        var calls = 0
        #expect(throws: Full()) {
            _ = try FeedParser.parse(data, url: URL(string: "https://feeds.example.org/feed.xml")!, batchSize: 2) { _, _ in
                calls += 1
                if calls == 2 { throw Full() }
            }
        }
        #expect(calls == 2)
    }

    /// The registry over many identities: each given out once, repeats refused, recordings kept.
    @Test func theRegistryHoldsManyIdentities() {
        var registry = EpisodeIdentity.Registry()
        let count = 100_000
        for number in 0..<count {
            let url = URL(string: "https://cdn.example.com/\(number).mp3")
            #expect(registry.admit("guid-\(number)", guid: "guid-\(number)", enclosureURL: url) == "guid-\(number)")
        }
        #expect(registry.count == count)
        #expect(registry.contains("guid-77") && !registry.contains("guid-\(count)"))
        // The same enclosure behind a tracking prefix: a repeat. Another enclosure: a recording.
        #expect(registry.admit("guid-5", guid: "guid-5", enclosureURL: URL(string: "https://dts.podtrac.com/redirect.mp3/cdn.example.com/5.mp3")) == nil)
        #expect(registry.admit("guid-5", guid: "guid-5", enclosureURL: URL(string: "https://cdn.example.com/5b.mp3"))
                == "guid:guid-5|enclosure:https://cdn.example.com/5b.mp3")
        #expect(registry.admit("guid-5", guid: "guid-5", enclosureURL: URL(string: "https://CDN.example.com/5b.mp3#t=1")) == nil)
        #expect(registry.count == count + 1)
    }

    /// The hash of a normalized enclosure is the hash of what normalizing gives, with or without
    /// the shortcut for URLs already normal.
    @Test(arguments: ["https://cdn.example.com/a.mp3", "http://cdn.example.com/a.mp3", "https://CDN.example.com/a.mp3",
                      "https://cdn.example.com/a.mp3?utm_source=x", "https://cdn.example.com/a.mp3#t", "https://dts.podtrac.com/redirect.mp3/cdn.example.com/a.mp3",
                      "https://Op3.dev/e/cdn.example.com/a.mp3", "ftp://cdn.example.com/a.mp3", "https://cdn.example.com/A.mp3", "https://cdn.example.com/é.mp3"])
    func theEnclosureHashFollowsNormalizing(_ text: String) throws {
        let url = try #require(URL(string: text))
        #expect(EpisodeIdentity.normalizedEnclosureHash(url) == IdentityHash(EpisodeIdentity.normalizedEnclosureURL(url)).first)
        #expect(EpisodeIdentity.normalizedEnclosureDigest(text) == IdentityHash(EpisodeIdentity.normalizedEnclosureURL(text)))
    }
}
