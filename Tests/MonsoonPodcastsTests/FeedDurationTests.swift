import Testing
@testable import MonsoonPodcasts

@Suite struct FeedDurationTests {
    @Test(arguments: [
        ("3600", 3600), ("45", 45), ("0", 0), ("1234.5", 1234), ("1014.708375", 1014), ("59:59", 3599), ("0:45", 45),
        ("90:00", 5400), ("1:00:00", 3600), ("00:04:49.0", 289), ("4:49.5", 289), ("00:60:05", 3605), ("01:02:03", 3723), ("1:2:3", 3723), ("100:00:00", 360_000), (" 00:10:00 ", 600),
        ("\n  42\n", 42), ("1234.", 1234),
    ])
    func parses(_ text: String, _ seconds: Int) {
        #expect(EpisodeDuration.parse(text) == seconds)
    }

    @Test(arguments: ["", " ", "abc", "-5", "PT1H2M", "1:00:00:00", "12:60", "1:60:00", "1:00:60", "1:2:3:", "1,5", "1 h", "1.5.5", ":30", "12:"])
    func rejects(_ text: String) {
        #expect(EpisodeDuration.parse(text) == nil)
    }

    /// synthetic/durations_variants.xml, item by item.
    @Test func durationsFixture() throws {
        let feed = try parseFixture("synthetic/durations_variants.xml")
        #expect(feed.episodes.map(\.duration) == [3600, 3599, 3600, 3723, 45, 45, 5400, 3723, 3723, nil, 600, nil, nil, nil, 360_000, nil])
    }

    @Test func fractionalDurationsInARealFeed() throws {
        // podverse-test-feed.xml writes durations like 1014.708375.
        let feed = try parseFixture("partytime/podverse-test-feed.xml")
        #expect(feed.episodes[1].duration == 1014)
        #expect(feed.episodes[2].duration == 835)
    }
}
