import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI
import MonsoonPodcasts

/// A feed whose titles carry terminal escape sequences, C1 controls, a bidi override and a
/// zero-width space: nothing printed for a person carries them raw (they show as escapes),
/// JSON stays valid and escapes them, and no file name holds the invisible ones.
@Suite struct TerminalSafetyTests {
    static let podcastTitle = "CD \u{1B}]0;OWNED\u{07}"
    static let episodeTitle = "C1 \u{9B}31m red \u{202E}kcatta\u{202C} zw\u{200B}sp"

    /// Every character a terminal would act on, or that hides what follows.
    static func raw(_ text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { scalar in
            scalar != "\n" && scalar != "\t" && (scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || [0x202E, 0x202C, 0x200B].contains(scalar.value))
        }
    }

    @Test func hostileTitlesArePrintedEscapedEverywhere() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/e1.mp3", Route(body: .bytes(Array("mp3".utf8)), contentType: "audio/mpeg"))
        let feed = """
            <?xml version="1.0"?><rss version="2.0"><channel><title><![CDATA[\(Self.podcastTitle)]]></title>
            <item><title><![CDATA[\(Self.episodeTitle)]]></title><guid>1</guid><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
            <enclosure url="\(server.url("/e1.mp3").absoluteString)" type="audio/mpeg"/></item></channel></rss>
            """
        try feed.write(toFile: folder.file("feed.xml"), atomically: true, encoding: .utf8)
        server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
        let url = server.url("/feed.xml").absoluteString

        var printed: [(String, RunResult)] = []
        for arguments in [["add", url], ["podcasts"], ["episodes", "1"], ["queue", "add", "1"], ["queue"], ["refresh"], ["inspect", url],
                          ["inspect", "feed.xml"], ["archive", url, "-o", "A"], ["downloads"]] {
            let result = await runMonsoon(arguments, in: folder.path)
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            printed.append((arguments.joined(separator: " "), result))
        }
        for (command, result) in printed {
            #expect(Self.raw(result.output + result.errors).isEmpty, "\(command) printed \(Self.raw(result.output + result.errors)) raw: \(result.output)")
        }
        let listing = printed.first { $0.0 == "podcasts" }?.1.output ?? ""
        #expect(listing.contains("CD \\x1B]0;OWNED\\x07"), "\(listing)")
        let episodes = printed.first { $0.0 == "episodes 1" }?.1.output ?? ""
        #expect(episodes.contains("C1 \\x9B31m red \\u202Ekcatta\\u202C zw\\u200Bsp"), "\(episodes)")

        // JSON: valid, the same titles back, and nothing raw in its text either.
        for arguments in [["podcasts", "--json"], ["episodes", "1", "--json"], ["queue", "--json"]] {
            let result = await runMonsoon(arguments, in: folder.path)
            #expect(Self.raw(result.output).isEmpty, "\(arguments): \(result.output)")
            #expect((try? JSONSerialization.jsonObject(with: Data(result.output.utf8))) != nil, "\(arguments): \(result.output)")
        }
        let podcasts = await runMonsoon(["podcasts", "--json"], in: folder.path)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(podcasts.output.utf8)) as? [[String: Any]])
        #expect(list.first?["title"] as? String == Self.podcastTitle)

        // inspect --json (written as it parses) escapes them too.
        let inspectJSON = await runMonsoon(["inspect", "feed.xml", "--json"], in: folder.path)
        #expect(Self.raw(inspectJSON.output).isEmpty, "\(inspectJSON.output)")
        let inspected = try #require(try JSONSerialization.jsonObject(with: Data(inspectJSON.output.utf8)) as? [String: Any])
        #expect(inspected["title"] as? String == Self.podcastTitle)

        // An export carries nothing a terminal would act on, and stays a list.
        let export = await runMonsoon(["export"], in: folder.path)
        #expect(Self.raw(export.output).isEmpty, "\(export.output)")
        #expect((try? OPML.read(Data(export.output.utf8)))?.count == 1)

        // The file on disk: control characters became spaces, the invisible ones are gone.
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: folder.file("A"))) ?? []
        #expect(names.contains("CD ]0;OWNED/2024-01-01 - C1 31m red kcatta zwsp.mp3"), "\(names)")
    }

    /// For a script (not a terminal), controls are still escaped, but invisible characters are
    /// kept: a folder of the user's may hold a zero-width non-joiner, as Persian writes, and a path
    /// printed for a script must be the real one.
    @Test func scriptsGetRealPathsWithTheirZeroWidthCharacters() {
        let output = TextOutput.capturing(terminal: false)
        output.line("/home/u/پادکست\u{200C}ها/a.mp3\t3")
        output.line("bad \u{1B}[2J \u{9B}x")
        #expect(output.text == "/home/u/پادکست\u{200C}ها/a.mp3\t3\nbad \\x1B[2J \\x9Bx\n")
        let terminal = TextOutput.capturing(terminal: true)
        terminal.line("پادکست\u{200C}ها")
        #expect(terminal.text == "پادکست\\u200Cها\n")
    }

    @Test func anExportKeepsZeroWidthAndC1CharactersAsReferences() {
        let title = "پادکست\u{200C}ها \u{9B} \u{202E}x"
        let opml = OPML.write([.init(title: title, feedURL: URL(string: "https://example.org/feed")!)])
        #expect(opml.contains("پادکست&#x200C;ها &#x9B; &#x202E;x"), "\(opml)")
        #expect((try? OPML.read(Data(opml.utf8)))?.first?.title == title)
    }

    @Test func escapingKeepsTheLayoutAndShowsTheRest() {
        #expect(TerminalText.escape("a\tb\nc") == "a\tb\nc")
        #expect(TerminalText.escape("a\tb\nc", keepingLayout: false) == "a\\x09b\\x0Ac")
        #expect(TerminalText.escape("\u{1B}[2J\r\u{7F}\u{85}") == "\\x1B[2J\\x0D\\x7F\\x85")
        #expect(TerminalText.escape("\u{061C}\u{200D}\u{2066}\u{FEFF}x") == "\\u061C\\u200D\\u2066\\uFEFFx")
        #expect(TerminalText.escape("Café ☕️ 東京 ‘quoted’ — ok") == "Café ☕️ 東京 ‘quoted’ — ok", "ordinary text is untouched")
        #expect(JSONText.string("a\u{9B}b\u{202E}c\u{7F}") == "\"a\\u009bb\\u202ec\\u007f\"")
    }
}
