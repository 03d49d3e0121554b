import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// `export` and `import` against a hostile world: titles with control characters, lists cut off or
/// broken, and files far larger than a list can be.
@Suite struct OPMLCommandTests {
    /// `xmllint --noout` on `text`: nil when it is well-formed XML, else xmllint's complaint.
    static func xmllintComplaint(_ text: String, in folder: Folder) throws -> String? {
        let path = folder.file("lint-\(UUID().uuidString).xml")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let errors = folder.file("lint-errors.txt")
        // Debian's libxml2-utils, which make test installs.
        let process = try SpawnedProcess("/usr/bin/xmllint", ["--noout", "--nonet", path], directory: folder.path, environment: [:],
                                         output: "/dev/null", errors: errors)
        while process.isRunning { usleep(10_000) }
        return process.terminationStatus == 0 ? nil : String(decoding: FileManager.default.contents(atPath: errors) ?? Data(), as: UTF8.self)
    }

    static func feedRoute(_ title: String) -> Route {
        Route(body: .bytes(Array(PodcastCommandTests.feed(title: title, count: 2).utf8)), contentType: "application/rss+xml")
    }

    @Test func anExportIsWellFormedWhateverTheTitlesHoldAndImportsBack() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a.xml", Self.feedRoute("A"))
        server.setRoute("/b.xml", Self.feedRoute("B"))
        for path in ["/a.xml", "/b.xml"] {
            #expect(await runMonsoon(["add", server.url(path).absoluteString], in: folder.path).status == 0)
        }
        // Titles as a feed, an older Monsoon or another program may have stored them.
        do {
            let database = try Database(path: folder.file(".monsoon/monsoon.sqlite"))
            try database.run("UPDATE podcasts SET title = ? WHERE id = 1", "Evil\u{1B}[31m red\u{07} bell \u{FFFE}\u{0}")
            try database.run("UPDATE podcasts SET title = ? WHERE id = 2", "Tab\there\nand \"quotes\" & <tags>")
        }
        let exported = await runMonsoon(["export"], in: folder.path)
        #expect(exported.status == 0, "\(exported.errors)")
        let complaint = try Self.xmllintComplaint(exported.output, in: folder)
        #expect(complaint == nil, "xmllint: \(complaint ?? "")")
        #expect(exported.output.contains("text=\"Evil[31m red bell \" "))
        #expect(exported.output.contains("text=\"Tab&#9;here&#10;and &quot;quotes&quot; &amp; &lt;tags&gt;\""))

        try exported.output.write(toFile: folder.file("subs.opml"), atomically: true, encoding: .utf8)
        let imported = await runMonsoon(["--home", folder.file("other"), "import", "subs.opml"], in: folder.path)
        #expect(imported.status == 0, "\(imported.errors)")
        #expect(imported.output.components(separatedBy: "subscribed: ").count == 3, "\(imported.output)")
    }

    @Test func aBrokenListSaysWhereAndSubscribesToNothing() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/good.xml", Self.feedRoute("Good"))
        server.setRoute("/evil.xml", Self.feedRoute("Evil"))
        let good = "<outline text=\"Good\" xmlUrl=\"\(server.url("/good.xml").absoluteString)\"/>"
        let lists = [
            "control.opml": "<?xml version=\"1.0\"?>\n<opml version=\"2.0\"><body>\n\(good)\n<outline text=\"a\u{1B}[31m\u{07}\" xmlUrl=\"\(server.url("/evil.xml").absoluteString)\"/>\n</body></opml>\n",
            "fffe.opml": "<opml version=\"2.0\"><body>\n\(good)\n<outline text=\"\u{FFFE}\" xmlUrl=\"\(server.url("/evil.xml").absoluteString)\"/>\n</body></opml>\n",
            "cut.opml": "<opml><body><outline",
            "cut-after-one.opml": "<opml><body>\n\(good)\n<outline text=\"Ev",
        ]
        let expected = [
            "control.opml": "control.opml: the list is not well-formed XML at line 4, column 17 (the character U+001B, which XML does not allow), so none of it was read; fix that line or export the list again",
            "fffe.opml": "fffe.opml: the list is not well-formed XML at line 3, column 16 (the character U+FFFE, which XML does not allow), so none of it was read; fix that line or export the list again",
            "cut.opml": "cut.opml: the list ends early, at line 1, column 21 (an incomplete copy?), so none of it was read; copy or export the whole list again",
            "cut-after-one.opml": "cut-after-one.opml: the list ends early, at line 3, column 18 (an incomplete copy?), so none of it was read; copy or export the whole list again",
        ]
        for (name, text) in lists {
            try text.write(toFile: folder.file(name), atomically: true, encoding: .utf8)
            let result = await runMonsoon(["import", name], in: folder.path)
            #expect(result.status == 1, "\(name)")
            #expect(result.errors == "monsoon: \(expected[name]!)\n")
            #expect(result.output.isEmpty, "\(name): \(result.output)")
            // The same through standard input.
            let piped = await runMonsoon(["import", "-"], in: folder.path, stdin: text)
            #expect(piped.status == 1)
            #expect(piped.errors == "monsoon: \(expected[name]!.replacingOccurrences(of: name, with: "standard input"))\n")
        }
        #expect(server.requests(for: "/good.xml").isEmpty && server.requests(for: "/evil.xml").isEmpty, "nothing was fetched")
        let podcasts = await runMonsoon(["podcasts", "--json"], in: folder.path)
        #expect(podcasts.output.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
    }

    @Test func aListLargerThanFeedsMayBeIsRefusedBeforeItIsRead() async throws {
        let folder = Folder()
        defer { folder.remove() }
        // 200 MB that take no disk: read whole, they took 839 MB of memory before being refused.
        let big = folder.file("big.opml")
        let descriptor = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(ftruncate(descriptor, 200 << 20) == 0)
        close(descriptor)
        let message = "it is 200 MiB, more than the limit of 50 MiB for a subscription list; it was not read"
        let file = await runMonsoon(["import", "big.opml"], in: folder.path)
        #expect(file.status == 1)
        #expect(file.errors == "monsoon: big.opml: \(message)\n")
        let archive = await runMonsoon(["archive", "--opml", "big.opml", "--dry-run"], in: folder.path)
        #expect(archive.status == 1)
        #expect(archive.errors == "monsoon: big.opml: \(message)\n", "named as given, as import names it")

        // Standard input: a file is refused from its size too; a pipe or a device once more than the limit came.
        let redirected = try await Self.importFromStandardInput(big, in: folder)
        #expect(redirected.status == 1)
        #expect(redirected.errors == "monsoon: standard input: \(message)\n")
        let endless = try await Self.importFromStandardInput("/dev/zero", in: folder)
        #expect(endless.status == 1)
        #expect(endless.errors == "monsoon: standard input: it is larger than the limit of 50 MiB for a subscription list; it was not read\n")
    }

    /// Runs the built `monsoon import -` with standard input from `input`.
    static func importFromStandardInput(_ input: String, in folder: Folder) async throws -> RunResult {
        let output = folder.file("out.txt")
        let errors = folder.file("err.txt")
        var environment = ProcessInfo.processInfo.environment
        environment["MONSOON_HOME"] = folder.file(".monsoon")
        let process = try SpawnedProcess(monsoonBinary, ["import", "-"], directory: folder.path, environment: environment, input: input,
                                         output: output, errors: errors)
        do {
            try await waitUntil(seconds: 60, "monsoon import - to end") { !process.isRunning }
        } catch {
            kill(process.processIdentifier, SIGKILL)   // one that reads on and on would take all the memory
            throw error
        }
        return RunResult(status: process.terminationStatus, output: String(decoding: FileManager.default.contents(atPath: output) ?? Data(), as: UTF8.self),
                         errors: String(decoding: FileManager.default.contents(atPath: errors) ?? Data(), as: UTF8.self))
    }
}
