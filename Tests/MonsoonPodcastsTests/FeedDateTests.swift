import Foundation
import Testing
@testable import MonsoonPodcasts

@Suite struct FeedDateTests {
    /// Each form, to the second, in UTC.
    @Test(arguments: [
        ("Tue, 02 Jan 2024 10:00:00 +0000", "2024-01-02T10:00:00Z"),
        ("Tue, 2 Jan 2024 10:00:00 GMT", "2024-01-02T10:00:00Z"),             // one-digit day
        ("02 Jan 2024 10:00:00 +0100", "2024-01-02T09:00:00Z"),               // no weekday
        ("Tuesday, 02 January 2024 10:00:00 PST", "2024-01-02T18:00:00Z"),    // full names
        ("Wed, 02 Jan 2024 10:00:00 +0000", "2024-01-02T10:00:00Z"),          // wrong weekday: ignored
        ("Di, 02 Jan 2024 10:00:00 +0100", "2024-01-02T09:00:00Z"),           // foreign weekday
        ("Tue,02 Jan 2024 10:00:00 +0000", "2024-01-02T10:00:00Z"),           // no space after the comma
        ("Tue 02 Jan 2024 10:00:00 +0000", "2024-01-02T10:00:00Z"),           // no comma
        ("  Tue, 02 Jan 2024 10:00:00 +0000  ", "2024-01-02T10:00:00Z"),      // padded
        ("Tue, 02 Jan 2024 10:00 EST", "2024-01-02T15:00:00Z"),               // missing seconds
        ("Tue, 02 Jan 2024", "2024-01-02T00:00:00Z"),                         // no time
        ("Tue, 02 Jan 24 10:00:00 +0000", "2024-01-02T10:00:00Z"),            // two-digit year
        ("Sat, 02 Jan 99 10:00:00 +0000", "1999-01-02T10:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 UT", "2024-01-02T10:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 UTC", "2024-01-02T10:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 Z", "2024-01-02T10:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 EDT", "2024-01-02T14:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 CST", "2024-01-02T16:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 CDT", "2024-01-02T15:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 MST", "2024-01-02T17:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 MDT", "2024-01-02T16:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 PDT", "2024-01-02T17:00:00Z"),
        ("Fri, 17 May 2019 06:00:00 BST", "2019-05-17T05:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 A", "2024-01-02T09:00:00Z"),              // military: A is UTC+1
        ("Tue, 02 Jan 2024 10:00:00 M", "2024-01-01T22:00:00Z"),              // M is UTC+12
        ("Tue, 02 Jan 2024 10:00:00 N", "2024-01-02T11:00:00Z"),              // N is UTC−1
        ("Tue, 02 Jan 2024 10:00:00 Y", "2024-01-02T22:00:00Z"),              // Y is UTC−12
        ("Tue, 02 Jan 2024 10:00:00 -0500", "2024-01-02T15:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 +05:30", "2024-01-02T04:30:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 +00:00", "2024-01-02T10:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00 GMT+0100", "2024-01-02T09:00:00Z"),
        ("Tue, 02 Jan 2024 10:00:00", "2024-01-02T10:00:00Z"),                // no zone: UTC
        ("Tue, 02 Jan 2024 10:00:00.250 +0000", "2024-01-02T10:00:00Z"),      // fraction dropped
        ("Thu, 29 Feb 2024 23:59:59 +0000", "2024-02-29T23:59:59Z"),          // leap day
        ("Wed, 03 Nov 2021 08:00:00 -0000", "2021-11-03T08:00:00Z"),
        ("2024-01-02T10:00:00Z", "2024-01-02T10:00:00Z"),                     // ISO 8601
        ("2024-01-02T10:00:00.123+05:30", "2024-01-02T04:30:00Z"),
        ("2024-01-02T10:00:00-08:00", "2024-01-02T18:00:00Z"),
        ("2024-01-02 10:00:00", "2024-01-02T10:00:00Z"),
        ("2024-01-02T10:00Z", "2024-01-02T10:00:00Z"),
        ("2024-01-02", "2024-01-02T00:00:00Z"),
        ("1969-07-20T20:17:40Z", "1969-07-20T20:17:40Z"),                     // before 1970
    ])
    func parses(_ text: String, _ expected: String) {
        #expect(utc(FeedDate.parse(text)) == expected)
    }

    @Test(arguments: [
        "", "   ", "not a date", "1704189600", "Tue, 32 Jan 2024 10:00:00 +0000", "Tue, 02 Jan 2024 25:61:00 +0000",
        "Fri, 30 Feb 2024 10:00:00 +0000", "Mon, 02 Foo 2024 10:00:00 +0000", "22.11.2022 12:16:00", "2024-13-01T00:00:00Z",
        "2024-01-02T10:00:00 garbage", "Tue, 02 Jan 2024 10:00:00 +9999", "Tue, 02 Jan 2024 1:0",
    ])
    func rejects(_ text: String) {
        #expect(FeedDate.parse(text) == nil)
    }

    @Test func formatsUTC() {
        #expect(FeedDate.iso8601String(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(FeedDate.iso8601String(Date(timeIntervalSince1970: 1_706_702_400.9)) == "2024-01-31T12:00:00Z")
        #expect(FeedDate.iso8601String(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
    }

    /// synthetic/dates_variants.xml: every item is kept, unparseable dates leave the date empty.
    /// Year 1 is `0001` in every date Monsoon writes (`episodes --json`, sidecars, manifests,
    /// file names), as `inspect --json` writes it.
    @Test func yearsAreWrittenInFourDigitsEverywhere() {
        let yearOne = FeedDate.timestamp(year: 1, month: 1, day: 1, hour: 0, minute: 0, second: 0, offset: 0)!
        #expect(FeedDate.iso8601String(yearOne) == "0001-01-01T00:00:00Z")
        #expect(UTCDate.iso(yearOne) == "0001-01-01T00:00:00Z")
        #expect(UTCDate.day(yearOne) == ("0001", "01", "01"))
        #expect(UTCDate.day(Date(timeIntervalSince1970: 1_706_702_400)) == ("2024", "01", "31"))
    }

    @Test func datesFixture() throws {
        let feed = try parseFixture("synthetic/dates_variants.xml")
        let expected: [String?] = [
            "2024-01-02T10:00:00Z", "2024-01-02T10:00:00Z", "2024-01-02T15:00:00Z", "2024-01-02T09:00:00Z", "2024-01-02T18:00:00Z",
            "2024-01-02T10:00:00Z", "2024-01-02T04:30:00Z", "2024-01-02T00:00:00Z", "2024-01-02T10:00:00Z", "2024-01-02T10:00:00Z",
            nil, nil, nil, nil, nil,
            "2024-01-02T09:00:00Z", "2024-01-02T10:00:00Z", "2024-01-02T10:00:00Z", "2024-01-02T10:00:00Z", "2024-01-02T10:00:00Z",
        ]
        #expect(feed.episodes.count == 20)
        #expect(feed.episodes.map { utc($0.published) } == expected)
    }

    /// Ten thousand dates in a row (their speed is measured by `make bench`'s feed parse, not here).
    @Test func parsesTenThousandDates() {
        var parsed = 0
        for day in 0..<10_000 where FeedDate.parse("Tue, \(day % 28 + 1) Jan 2024 10:00:00 +0000") != nil { parsed += 1 }
        #expect(parsed == 10_000)
    }
}
