import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// `episodes`, `queue` and `downloads` with CJK, Arabic and emoji titles: a header, columns
/// aligned by display width, sizes, and names cut in the middle to the terminal's width.
@Suite struct ListingWidthTests {
    static let titles = [
        "東京の夜と朝のポッドキャスト第一回、ゲストは有名な作曲家と一緒に長い話をします",
        "🎧🎙️ Emoji hour 👩‍👩‍👧 with a family and a flag 🇯🇵 and a rather long tail of words",
        "مرحبا بكم في البودكاست العربي الطويل جدا مع ضيوف كثيرين",
        "Plain",
    ]

    /// The column where `text` starts in `line`, counted as a terminal draws it.
    static func column(of text: String, in line: String) -> Int? {
        guard let range = line.range(of: text) else { return nil }
        return TerminalText.displayWidth(String(line[..<range.lowerBound]))
    }

    /// A library of the four titles (Plain's enclosure has no length), served by `server`, subscribed in `folder`.
    static func library(_ server: TestServer, in folder: Folder) async throws {
        var items: [(title: String, url: String, length: Int?)] = []
        for (index, title) in titles.enumerated() {
            server.setRoute("/w\(index).mp3", Route(body: .pattern(size: 3_000 + index, seed: UInt64(index)), contentType: "audio/mpeg"))
            items.append((title, server.url("/w\(index).mp3").absoluteString, index == 3 ? nil : 3_000 + index))
        }
        server.setRoute("/feed.xml", LiveViewTests.feed(items))
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("Podcasts")], in: folder.path).status == 0)
    }

    @Test func episodesAndTheQueueAlignWideTitlesWithSizes() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        try await Self.library(server, in: folder)
        // Runs in-process as on a terminal 100 columns wide.
        let episodes = await runMonsoon(["episodes", "1"], in: folder.path, terminal: true)
        let lines = episodes.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "ID      PUBLISHED  LENGTH   STATE       SIZE       TITLE", "\(episodes.output)")
        #expect(lines.count == 5)
        // (The ZWJs of the emoji family are shown escaped on a terminal, as every invisible character is: cut after that.)
        #expect(lines.allSatisfy { TerminalText.displayWidth($0) <= 99 }, "\(lines.map(TerminalText.displayWidth))")
        #expect(lines.dropFirst().allSatisfy { Self.column(of: " 2024-01-0", in: $0) == 7 })
        // Each title starts in the same column, whatever the characters before it in other rows.
        #expect(lines.allSatisfy { line in Self.titles.contains { Self.column(of: String($0.prefix(2)), in: line) == 51 } || line.hasSuffix("TITLE") })
        #expect(lines.contains { $0.contains("2.9 KiB") && $0.contains("東京の夜") && $0.contains("…") })
        #expect(lines.contains { $0.hasSuffix(" -          Plain") }, "an unknown size is '-'")
        // In a pipe the title is whole.
        let piped = await runMonsoon(["episodes", "1"], in: folder.path)
        #expect(piped.output.contains(Self.titles[0]) && piped.output.contains(Self.titles[2]))

        #expect(await runMonsoon(["queue", "add", "--podcast", "Wide", "--all"], in: folder.path).status == 0)
        let queue = await runMonsoon(["queue"], in: folder.path, terminal: true)
        let rows = queue.output.split(separator: "\n").map(String.init)
        #expect(rows.first == "POS  ID      STATE        DONE  SIZE                   EPISODE", "\(queue.output)")
        #expect(rows.count == 5)
        #expect(rows.allSatisfy { TerminalText.displayWidth($0) <= 99 })
        #expect(rows.dropFirst().allSatisfy { Self.column(of: "Wide Show: ", in: $0) == 55 }, "\(queue.output)")
        #expect(rows.contains { $0.contains(" 2.9 KiB ") && $0.contains("…") && $0.contains("東京") })
    }

    @Test func downloadsCutsPathsInTheMiddleKeepingTheExtension() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        try await Self.library(server, in: folder)
        #expect(await runMonsoon(["queue", "add", "--podcast", "Wide", "--all"], in: folder.path).status == 0)
        let run = await runMonsoon(["download"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        let listing = await runMonsoon(["downloads"], in: folder.path, terminal: true)
        let lines = listing.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("ID     STATUS         DONE  SIZE                   FILE") == true, "\(listing.output)")
        #expect(lines.count == 5)
        // The URL column starts in one place: the file column is 40 columns wide on every row.
        #expect(lines.dropFirst().allSatisfy { Self.column(of: "http://", in: $0) == 92 }, "\(listing.output)")
        #expect(lines.dropFirst().allSatisfy { $0.contains(".mp3 ") }, "the extension is kept")
        #expect(lines.contains { $0.contains("…") })
        let piped = await runMonsoon(["downloads"], in: folder.path)
        #expect(piped.output.contains(folder.file("Podcasts/Wide Show/")), "a pipe gets whole paths")
    }
}
