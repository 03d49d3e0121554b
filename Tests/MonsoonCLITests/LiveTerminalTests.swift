import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// The live view on a real pseudo-terminal: `monsoon download` of a queue of wide titles, drawn
/// at 100 columns, resized to 50, then interrupted with a typed Ctrl-C.
@Suite struct LiveTerminalTests {
    /// The rows of the screen that hold `text`.
    static func rows(_ screen: VirtualScreen, containing text: String) -> [String] {
        screen.lines.filter { $0.contains(text) }
    }

    @Test func theLiveViewFitsTheWidthFollowsAResizeAndClearsOnCtrlC() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // Four episodes of 8 MB at 100 KB/s each (far longer than the test), the last with no length in the feed; two at a time.
        var items: [(title: String, url: String, length: Int?)] = []
        for (index, title) in ListingWidthTests.titles.enumerated() {
            server.setRoute("/w\(index).mp3", Route(body: .pattern(size: 8_000_000, seed: UInt64(index)), contentType: "audio/mpeg", throttle: 100_000))
            items.append((title, server.url("/w\(index).mp3").absoluteString, index == 3 ? nil : 8_000_000))
        }
        server.setRoute("/feed.xml", LiveViewTests.feed(items))
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("Podcasts")], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", "--podcast", "Wide", "--all"], in: folder.path).status == 0)

        let terminal = try PseudoTerminal(["download", "-j", "2"], in: folder.path, home: folder.file(".monsoon"), columns: 100)
        let screen = terminal.screen
        // At 100 columns: the run's line counts the queued episodes, and the bytes left include theirs.
        try await terminal.wait("the run's line with an ETA") { Self.rows(screen, containing: " done · ").first?.contains("ETA") == true }
        let line = try #require(Self.rows(screen, containing: " done · ").first)
        #expect(Self.rows(screen, containing: " done · ").count == 1)
        #expect(line.hasPrefix("0/4 done · 2 active · 2 queued · ") && line.hasSuffix(" · 1 size unknown"), "\(line)")
        // Three files of 8 MB are known (the fourth is not): more than two files' worth is left while two run.
        let left = try #require(line.split(separator: "·").first { $0.hasSuffix(" left ") })
        let mebibytes = try #require(Double(left.trimmingCharacters(in: .whitespaces).split(separator: " ")[0]))
        #expect(left.hasSuffix("MiB left ") && mebibytes > 16, "\(line)")
        // Rows are named by the episodes' titles, cut in the middle, and fit the width.
        #expect(Self.rows(screen, containing: "東京の夜と朝").count == 1)
        #expect(Self.rows(screen, containing: "🎧").count == 1)
        #expect(screen.lines.allSatisfy { TerminalText.displayWidth($0) <= 99 }, "\(screen.lines)")
        #expect(screen.wraps == 0, "no drawn line wraps")

        // Narrower: the old block, rewrapped by the terminal, is cleared whole; nothing is left twice.
        try await terminal.resize(columns: 50)
        try await terminal.wait("a redraw at 50 columns") {
            Self.rows(screen, containing: " done · ").count == 1 && Self.rows(screen, containing: " done · ").allSatisfy { TerminalText.displayWidth($0) <= 49 }
        }
        let before = terminal.raw.count
        try await terminal.wait("two more redraws") { terminal.raw.dropFirst(before).components(separatedBy: " done · ").count > 2 }
        #expect(Self.rows(screen, containing: " done · ").count == 1, "\(screen.lines)")
        #expect(screen.lines.count == 3, "two downloads and the run's line: \(screen.lines)")
        #expect(screen.lines.allSatisfy { TerminalText.displayWidth($0) <= 49 }, "\(screen.lines)")
        #expect(screen.wraps == 0, "\(screen.lines)")
        // What the narrow line does without: the counts and the speed; the ETA and the unknown sizes stay.
        let narrow = try #require(Self.rows(screen, containing: " done · ").first)
        #expect(narrow.hasPrefix("0/4 done · ") && narrow.contains(" · ETA ") && narrow.hasSuffix(" · 1 size unknown"), "\(narrow)")

        // Wider again: the next redraws use the whole width, not the narrow cut.
        try await terminal.resize(columns: 100)
        try await terminal.wait("a redraw at 100 columns") {
            Self.rows(screen, containing: " done · ").first?.hasPrefix("0/4 done · 2 active · 2 queued · ") == true
        }
        #expect(Self.rows(screen, containing: " done · ").count == 1, "\(screen.lines)")
        #expect(screen.lines.count == 3, "two downloads and the run's line: \(screen.lines)")
        #expect(screen.lines.contains { TerminalText.displayWidth($0) > 49 }, "the rows use the new width: \(screen.lines)")
        #expect(screen.lines.allSatisfy { TerminalText.displayWidth($0) <= 99 }, "\(screen.lines)")

        // Ctrl-C, typed: the terminal echoes ^C below the block; the summary starts a clean line.
        terminal.type("\u{03}")
        #expect(try await terminal.finish() == 130)
        let summary = screen.lines.joined()
        #expect(screen.lines.first == "monsoon: interrupted: part files kept; run the same command again to resume", "\(screen.lines)")
        #expect(screen.lines.dropFirst().first?.hasPrefix("monsoon: 0 of 4 downloaded, 2 interrupted, 2 not started (") == true, "\(screen.lines)")
        #expect(!summary.contains("^C") && !summary.contains(" done · "), "\(screen.lines)")
        #expect(summary.contains(" transferred in "), "\(summary)")
    }
}

extension LiveTerminalTests {
    /// A plain download on a terminal 60 columns wide.
    @Test func aPlainDownloadIsNamedByItsFileAtSixtyColumns() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let name = "日本語のとても長いファイル名のエピソード第十二回.mp3"
        // Held part-way until its line has been drawn.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/cdn/a1b2c3", Route(body: .pattern(size: 3_000_000, seed: 4), contentType: "audio/mpeg",
                                             contentDisposition: "attachment; filename*=UTF-8''" + name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                                             gate: gate, gateAfter: 500_000))
        let terminal = try PseudoTerminal(["get", server.url("/cdn/a1b2c3").absoluteString], in: folder.path, home: folder.file(".monsoon"), columns: 60)
        let screen = terminal.screen
        // Named by its file (from Content-Disposition) while it runs, not by the URL's `a1b2c3`.
        try await terminal.wait("the download's line with its file's name") { screen.ended.contains { $0.contains("%") && $0.contains(".mp3 ") } }
        gate.open()
        let row = try #require(screen.ended.first { $0.contains("%") && $0.contains(".mp3 ") })
        // Cut in the middle, keeping its start and its extension (24 columns at least: the bar and the speed give way first).
        #expect(row.hasPrefix("  日本語の") && row.contains("…") && row.contains("回.mp3 ") && !row.contains("a1b2c3"), "\(row)")
        #expect(try await terminal.finish() == 0)
        let named = try #require(screen.ended.firstIndex(of: row))
        #expect(!screen.ended[named...].contains { $0.contains("a1b2c3") }, "never the URL's name once the file's is known")
        #expect(screen.ended.allSatisfy { TerminalText.displayWidth($0) <= 59 }, "\(screen.ended)")
        #expect(screen.lines.count == 2, "\(screen.lines)")
        #expect(screen.lines.first?.hasPrefix("✓ 日本語の") == true && screen.lines.first?.hasSuffix("第十二回.mp3  2.9 MiB") == true, "\(screen.lines)")
        #expect(screen.lines.last?.hasPrefix("1 of 1 downloaded (2.9 MiB transferred in ") == true, "\(screen.lines)")
        #expect(screen.lines.allSatisfy { TerminalText.displayWidth($0) <= 59 } && screen.wraps == 0, "\(screen.lines)")
        #expect(folder.contents() == [name])
    }
}

extension LiveTerminalTests {
    /// `get --limit-rate` on a terminal, 2.6 s: every frame goes back over the one before it and
    /// ends clearing below itself, and from 25 % on the ETA is within a fifth of the time the limit
    /// leaves (what is left of the file at 200 KiB/s), give or take the second it is rounded up to.
    /// That, not the test's clock: the frames are read late when the machine is busy.
    @Test func aRateLimitedGetShowsAnHonestETA() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let (size, limit) = (512 << 10, 200 << 10)
        server.setRoute("/limited.mp3", Route(body: .pattern(size: size, seed: 5), contentType: "audio/mpeg"))
        let terminal = try PseudoTerminal(["get", "--limit-rate", "200K", server.url("/limited.mp3").absoluteString], in: folder.path,
                                          home: folder.file(".monsoon"), columns: 120)
        await terminal.readUntilExit()
        #expect(try await terminal.finish() == 0)
        // Each frame ends with ESC[J.
        let frames = terminal.raw.components(separatedBy: "\u{1B}[J").dropLast()
        #expect(frames.dropFirst().allSatisfy { $0.hasPrefix("\r\u{1B}[") && $0.contains("A") }, "\(frames)")
        #expect(frames.contains { $0.contains("✓ limited.mp3") }, "\(frames)")
        let whole = Double(size) / Double(limit)
        var checked = 0
        for frame in frames where !frame.contains("✓") {
            let lines = frame.components(separatedBy: "\n")
            guard let row = lines.first(where: { $0.contains("%") }), let run = lines.first(where: { $0.contains(" done · ") }),
                  let percent = row.split(separator: "%").first?.split(separator: " ").last.flatMap({ Int($0) }), (25..<100).contains(percent) else { continue }
            // The percentage is rounded down: between 99 - percent and 100 - percent of the file is left.
            let (least, most) = (Double(99 - percent) / 100 * whole, Double(100 - percent) / 100 * whole)
            for line in [row, run] {
                let eta = try #require(LiveFrameTests.eta(line), "\(line)")
                #expect(Double(eta) >= 0.8 * least && Double(eta) - 1 <= 1.2 * most, "ETA \(eta) s with \(least)–\(most) s left at \(percent) %: \(line)")
            }
            checked += 1
        }
        #expect(checked >= 3, "\(frames)")
    }
}

extension LiveTerminalTests {
    /// `download -j 2` of three episodes, the first two held mid-body: as each ends, the next takes
    /// its slot while its file is put in place, before it is completed; no frame counts more than two active.
    @Test func activeNeverExceedsTheDownloadsAtATime() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let gate = Gate()
        defer { gate.open() }
        var items: [(title: String, url: String, length: Int?)] = []
        for index in 0..<3 {
            server.setRoute("/j\(index).mp3", Route(body: .pattern(size: 400_000, seed: UInt64(index)), contentType: "audio/mpeg", gate: gate, gateAfter: 100_000))
            items.append(("Episode \(index + 1): Part", server.url("/j\(index).mp3").absoluteString, 400_000))
        }
        server.setRoute("/feed.xml", LiveViewTests.feed(items))
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("Podcasts")], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", "--podcast", "Wide Show", "--all"], in: folder.path).status == 0)
        let terminal = try PseudoTerminal(["download", "-j", "2"], in: folder.path, home: folder.file(".monsoon"), columns: 100)
        try await terminal.wait("two held") { terminal.raw.contains(" · 2 active · 1 queued") }
        gate.open()
        #expect(try await terminal.finish() == 0)
        let counts = terminal.raw.matches(of: /(\d+) active/).compactMap { Int($0.output.1) }
        #expect(!counts.isEmpty && counts.allSatisfy { $0 <= 2 }, "\(counts)")
        #expect(terminal.raw.components(separatedBy: "✓ Episode ").count == 4, "\(terminal.raw)")
    }
}
