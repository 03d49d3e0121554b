import Foundation
import Testing
@testable import MonsoonPodcasts

@Suite struct FeedIdentityTests {
    /// Each tracking prefix, alone.
    @Test(arguments: [
        ("https://dts.podtrac.com/redirect.mp3/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://dts.podtrac.com/redirect.m4a/media.example.org/ep.m4a", "https://media.example.org/ep.m4a"),
        ("http://www.podtrac.com/pts/redirect.mp3/media.example.org/ep.mp3", "http://media.example.org/ep.mp3"),
        ("https://play.podtrac.com/show-123/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://pdst.fm/e/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://chtbl.com/track/ABC123/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://chrt.fm/track/9EE2G/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://op3.dev/e/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://op3.dev/e/https://media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://op3.dev/e,pg=7a2d292c-8656-5fcf-88d2-31b10e54d7c7/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://pscrb.fm/rss/p/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://verifi.podscribe.com/rss/p/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://arttrk.com/p/ABCD1/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://prfx.byspotify.com/e/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://mgln.ai/e/123/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
        ("https://DTS.PODTRAC.COM/redirect.mp3/Media.Example.ORG/Ep.mp3", "https://media.example.org/Ep.mp3"),  // host case only
    ])
    func removesTrackingPrefix(_ url: String, _ expected: String) {
        #expect(EpisodeIdentity.normalizedEnclosureURL(url) == expected)
    }

    /// Chains of prefixes, as in synthetic/enclosure_urls.xml and real feeds.
    @Test(arguments: [
        ("https://dts.podtrac.com/redirect.mp3/chtbl.com/track/ABC123/traffic.megaphone.fm/XYZ.mp3", "https://traffic.megaphone.fm/XYZ.mp3"),
        ("https://op3.dev/e/pdst.fm/e/chrt.fm/track/1/media.example.org/ep.mp3?updated=1700000000", "https://media.example.org/ep.mp3"),
        ("https://dts.podtrac.com/redirect.mp3/chrt.fm/track/9EE2G/pdst.fm/e/rss.art19.com/episodes/7684b7cb.mp3?rss_browser=BAh",
         "https://rss.art19.com/episodes/7684b7cb.mp3?rss_browser=BAh"),
        ("https://prfx.byspotify.com/e/pscrb.fm/rss/p/arttrk.com/p/XY/op3.dev/e/media.example.org/ep.mp3", "https://media.example.org/ep.mp3"),
    ])
    func removesChains(_ url: String, _ expected: String) {
        #expect(EpisodeIdentity.normalizedEnclosureURL(url) == expected)
    }

    @Test(arguments: [
        ("https://media.example.org/ep.mp3?utm_source=rss&utm_medium=x&id=7", "https://media.example.org/ep.mp3?id=7"),
        ("https://media.example.org/ep.mp3?awCollectionId=1&awEpisodeId=2&aid=rss_feed&updated=99", "https://media.example.org/ep.mp3"),
        ("https://media.example.org/ep.mp3?dest-id=171666", "https://media.example.org/ep.mp3?dest-id=171666"),
        ("http://media.example.org/ep.mp3#t=10", "http://media.example.org/ep.mp3"),
        ("file:///srv/ep.mp3#x", "file:///srv/ep.mp3"),
        ("https://media.example.org/pdst.fm/e/ep.mp3", "https://media.example.org/pdst.fm/e/ep.mp3"),  // only as a prefix
        ("https://pdst.fm/e/", "https://pdst.fm/e/"),                                                 // nothing behind it: kept
    ])
    func dropsVolatileParts(_ url: String, _ expected: String) {
        #expect(EpisodeIdentity.normalizedEnclosureURL(url) == expected)
    }

    /// Moving an episode between analytics services keeps its identity.
    @Test func identityIgnoresTrackingWithoutGuid() throws {
        let before = try parseXML(rss("<item><title>A</title><enclosure url=\"https://dts.podtrac.com/redirect.mp3/cdn.example.org/a.mp3?utm_source=x\" type=\"audio/mpeg\"/></item>"))
        let after = try parseXML(rss("<item><title>A (new title)</title><enclosure url=\"https://op3.dev/e/pdst.fm/e/cdn.example.org/a.mp3\" type=\"audio/mpeg\"/></item>"))
        #expect(before.episodes[0].identity == "https://cdn.example.org/a.mp3")
        #expect(before.episodes[0].identity == after.episodes[0].identity)
        #expect(before.episodes[0].guid == nil)
    }

    @Test func identityFallsBackToLinkThenTitleAndDate() throws {
        let feed = try parseXML(rss("""
            <item><title>With link</title><link>https://www.example.org/ep/1</link></item>
            <item><title>Bare</title><pubDate>Mon, 01 Jan 2024 10:00:00 +0000</pubDate></item>
            <item><title>Bare</title><pubDate>not a date</pubDate></item>
            """))
        #expect(feed.episodes.map(\.identity) == [
            "https://www.example.org/ep/1", "title:Bare|date:2024-01-01T10:00:00Z", "title:Bare|date:not a date",
        ])
    }

    /// synthetic/guids_enclosures.xml: "Episode 2" re-uses the guid of "Episode 1" with another
    /// enclosure: another recording, kept under the guid and its enclosure. Feed order is kept.
    @Test func reusedGuidsKeepEveryRecording() throws {
        let feed = try parseFixture("synthetic/guids_enclosures.xml")
        #expect(feed.duplicateCount == 0)
        #expect(feed.episodes.map(\.title) == [
            "Episode 1", "Episode 2", "Episode 3", "Episode 4", "Episode 5", "Episode 6", "Episode 7",
            "Enclosure without url", "Empty enclosure url", "Two enclosures", "nt",  // untitled: named after its file
        ])
        #expect(feed.episodes.map(\.guid) == ["dup", "dup", nil, nil, nil, "https://example.org/ep/6", "ep-1", "no-url", "empty-url", "two", "no-title"])
        #expect(feed.episodes[0].identity == "dup")
        #expect(feed.episodes[1].identity == "guid:dup|enclosure:https://media.example.org/ep2.mp3")
        #expect(feed.episodes[2].identity == "https://media.example.org/ep3.mp3")   // no guid: the enclosure
        #expect(feed.episodes[3].identity == "title:Episode 4|date:2024-01-04T10:00:00Z")  // no guid, no enclosure
        #expect(feed.episodes[4].guid == nil)                                         // an empty guid is no guid
        #expect(feed.episodes[7].enclosureURL == nil)                                 // enclosure without url
        #expect(feed.episodes[8].enclosureURL == nil)                                 // empty url
        #expect(feed.episodes[9].enclosureURL?.absoluteString == "https://media.example.org/a.mp3")  // the first of two
        #expect(feed.episodes[9].mediaType == "audio/mpeg")
        #expect(feed.episodes[10].declaredLength == nil)                              // length="x"
        #expect(feed.episodes[0].declaredLength == 1000)
    }

    /// Only the same guid with the same enclosure (tracking prefixes and volatile parameters aside) is a
    /// duplicate; a third item with the second's recording is one too.
    @Test func exactDuplicatesAreDroppedAndCounted() throws {
        let feed = try parseXML(rss("""
            <item><title>A</title><guid>g</guid><enclosure url="https://cdn.example.org/a.mp3" type="audio/mpeg"/></item>
            <item><title>A again</title><guid>g</guid><enclosure url="https://dts.podtrac.com/redirect.mp3/cdn.example.org/a.mp3?utm_source=x" type="audio/mpeg"/></item>
            <item><title>B</title><guid>g</guid><enclosure url="https://cdn.example.org/b.mp3" type="audio/mpeg"/></item>
            <item><title>B again</title><guid>g</guid><enclosure url="https://op3.dev/e/cdn.example.org/b.mp3" type="audio/mpeg"/></item>
            <item><title>No enclosure</title><guid>g</guid></item>
            """))
        #expect(feed.episodes.map(\.title) == ["A", "B"])
        #expect(feed.episodes.map(\.identity) == ["g", "guid:g|enclosure:https://cdn.example.org/b.mp3"])
        #expect(feed.duplicateCount == 3)
    }

    /// A feed shaped like `bigfeed.py --quirks` (guids re-used by later items with their own enclosures,
    /// tracking prefixes, items without guid or enclosure): every item is kept, each under its own identity,
    /// and parsing the same document again gives the same identities.
    @Test func aLargeFeedWithReusedGuidsLosesNothing() throws {
        var items = ""
        for number in stride(from: 2000, through: 1, by: -1) {
            // Every 37th item re-uses the guid of an item 50 numbers newer, as a republished feed does.
            let reuses = number % 37 == 0 && number <= 1950 && number % 103 != 0 && (number + 50) % 103 != 0
            let guid: String? = number % 101 == 0 ? nil : "guid-\(reuses ? number + 50 : number)"
            let host = number % 10 == 0 ? "dts.podtrac.com/redirect.mp3/media.example.org" : "media.example.org"
            items += "<item><title>Ep. \(number)</title><link>https://www.example.org/ep/\(number)</link>"
            if let guid { items += "<guid isPermaLink=\"false\">\(guid)</guid>" }
            if number % 103 != 0 { items += "<enclosure url=\"https://\(host)/bigfeed/episode-\(number).mp3\" type=\"audio/mpeg\" length=\"1\"/>" }
            items += "</item>\n"
        }
        let document = rss(items)
        let feed = try parseXML(document)
        #expect(feed.episodes.count == 2000)
        #expect(feed.duplicateCount == 0)
        #expect(Set(feed.episodes.map(\.identity)).count == 2000)
        #expect(feed.episodes.filter { $0.identity.hasPrefix("guid:") }.count == 51)
        #expect(try parseXML(document).episodes.map(\.identity) == feed.episodes.map(\.identity))
    }

    @Test func duplicatesAcrossIdentityKinds() throws {
        let feed = try parseXML(rss("""
            <item><guid>a</guid></item><item><guid> a </guid></item>
            <item><enclosure url="https://pdst.fm/e/x.example/1.mp3" type="audio/mpeg"/></item>
            <item><enclosure url="https://x.example/1.mp3?utm_campaign=z" type="audio/mpeg"/></item>
            """))
        #expect(feed.episodes.count == 2)
        #expect(feed.duplicateCount == 2)
    }
}

