import Foundation
import MonsoonPodcasts
import Testing
@testable import MonsoonCLI
@testable import MonsoonEngine

/// What a download's line keeps as the terminal narrows: the podcast's name when several run,
/// then the episode's title without its numbering, cut in the middle; the bar, the speed and the
/// sizes give way before the name does.
@Suite struct EpisodeLabelTests {
    static let request = DownloadRequest(id: "e1", url: URL(string: "http://h/a1b2c3")!, destination: .file("/tmp/a1b2c3"), userInfo: [
        EpisodeQueue.titleKey: "Episode 11: On curl and resuming downloads", EpisodeQueue.podcastKey: "Linux Unplugged", EpisodeQueue.guidKey: "g11",
    ])

    /// 3 of 8 MiB at 2 MiB/s: ETA 0:03.
    static func row() -> GetReporter.Row {
        let row = GetReporter.Row(name: "a1b2c3")
        row.episode = EpisodeLabel(request)
        (row.status, row.bytes, row.total) = (.downloading, 3 << 20, 8 << 20)
        row.rate.add(1 << 20, at: Date(timeIntervalSince1970: 0))
        row.rate.add(3 << 20, at: Date(timeIntervalSince1970: 1))
        return row
    }

    @Test(arguments: [
        // columns, several podcasts, the name as shown, whether the bar, the sizes and the speed are
        (120, true, "Linux Unplugged · On curl and… downloads", true, true, true),
        (80, true, "Linux Unplugged · On curl…nloads", false, true, true),
        (60, true, "Linux Unplugged · On curl and… downloads", false, false, false),
        (40, true, "Linu…gged · On cu…oads", false, false, false),
        (120, false, "On curl and resuming downloads", true, true, true),
        (80, false, "On curl and resuming downloads", false, true, true),
        (60, false, "On curl and resuming downloads", false, false, false),
        (40, false, "On curl and… downloads", false, false, false),
    ])
    func aNarrowLineKeepsTheTellingPartOfTheName(_ columns: Int, _ several: Bool, _ name: String, _ bar: Bool, _ sizes: Bool, _ speed: Bool) {
        let reporter = GetReporter(context: CommandContext(output: .capturing(), errors: .capturing(), environment: [:], currentDirectory: "/", isTerminal: true),
                                   quiet: false, verbose: false, expected: 1)
        let line = reporter.render(Self.row(), now: Date(timeIntervalSince1970: 1), width: columns - 1, podcasts: several)
        #expect(line.hasPrefix("  \(name) ") && TerminalText.displayWidth(line) <= columns - 1, "\(line)")
        #expect(line.hasSuffix(" 37%  3.0 MiB / 8.0 MiB  2.0 MiB/s  ETA 0:03") || !sizes, "\(line)")
        #expect(line.contains("[###-------]") == bar && line.contains(" / 8.0 MiB") == sizes && line.contains("/s") == speed, "\(line)")
        #expect(line.hasSuffix(" 37%  ETA 0:03") || sizes, "\(line)")
    }

    @Test func theNumberingBeforeATitleIsWhatGoesFirst() {
        for (title, telling) in [("Episode 11: On curl", "On curl"), ("#42 - Hard links", "Hard links"), ("S2E3 | Pipes", "Pipes"), ("Folge 12 – Titel", "Titel"),
                                 ("On curl: the talk", "On curl: the talk"), ("Why 2024 was the year of Linux: a look", "Why 2024 was the year of Linux: a look"),
                                 ("Episode 11:", "Episode 11:")] {
            #expect(EpisodeLabel.withoutNumbering(title) == telling, "\(title)")
        }
    }

    @Test func aDownloadOfNoEpisodeHasNoLabelAndJSONSaysWhichEpisode() throws {
        #expect(EpisodeLabel(DownloadRequest(id: "d1", url: URL(string: "http://h/a")!, destination: .file("/tmp/a"))) == nil)
        let fields = try #require(EpisodeLabel(Self.request)).jsonFields
        #expect(fields.map(\.0) == ["podcast", "episode"])
        #expect(fields.map(\.1) == ["\"Linux Unplugged\"", "{\"title\": \"Episode 11: On curl and resuming downloads\", \"guid\": \"g11\"}"])
    }
}
