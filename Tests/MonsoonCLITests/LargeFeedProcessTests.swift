import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// Memory stays bounded on large feeds (issue 20): the built `monsoon` subscribes to and refreshes
/// a feed of 300,000 items, served by the test server, and its peak resident memory is measured.
///
/// Before episodes were streamed into the database, `add` of this feed peaked near 400 MiB in the
/// debug build (every item a `ParsedEpisode`, with strings, URLs and dictionaries around it), and
/// grew with every item; now the document (15 MB), the identities' digests and one batch are held.
@Suite struct LargeFeedProcessTests {
    static let items = 300_000
    /// Well over what streaming needs (about 76 MiB in the debug build, the program itself 30 of
    /// them; a loaded machine has seen 160 MiB once, as the allocator's peak varies with how the
    /// threads are scheduled), well under what building the whole feed in memory took (400-490 MiB).
    static let boundKilobytes = 224 * 1024

    static func writeFeed(to path: String) throws {
        var text = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Big</title>\n"
        text.reserveCapacity(items * 48 + 100)
        for index in 0..<items { text += "<item><guid>\(index)</guid><title>T</title></item>\n" }
        text += "</channel></rss>\n"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    @Test func addAndRefreshOfALargeFeedStayBounded() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        try Self.writeFeed(to: folder.file("big.xml"))
        // No validators: every refresh reads the whole feed again.
        server.setRoute("/big.xml", Route(body: .file(folder.file("big.xml")), contentType: "application/rss+xml"))
        let url = server.url("/big.xml").absoluteString

        let (added, addPeak) = try await Self.run(["add", url], in: folder)
        #expect(added.status == 0, "\(added.errors)")
        #expect(added.output == "subscribed: 1 Big (\(Self.items) episodes)\n")
        #expect(addPeak < Self.boundKilobytes, "add peaked at \(addPeak / 1024) MiB")

        let (refreshed, refreshPeak) = try await Self.run(["refresh"], in: folder)
        #expect(refreshed.status == 0, "\(refreshed.errors)")
        #expect(refreshed.output == "Big: 0 new, 0 updated\n")
        #expect(refreshPeak < Self.boundKilobytes, "refresh peaked at \(refreshPeak / 1024) MiB")
        #expect(server.requests(for: "/big.xml").count == 2, "the refresh read the feed again")

        let podcasts = await runMonsoon(["podcasts", "--json"], in: folder.path)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(podcasts.output.utf8)) as? [[String: Any]])
        #expect(list.first?["episodes"] as? Int == Self.items)
    }

    /// Runs the built `monsoon` under `nice -n 19`, so its seconds of CPU never starve the timing-based
    /// suites running beside it; its peak resident memory (in KiB) is the program's, which `nice` execs.
    static func run(_ arguments: [String], in folder: Folder) async throws -> (RunResult, Int) {
        guard FileManager.default.isExecutableFile(atPath: monsoonBinary) else {
            throw CLITestError("the monsoon binary is missing at \(monsoonBinary): build it with `swift build` (make test does)")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["MONSOON_HOME"] = folder.file(".monsoon")
        let (out, err) = (folder.file("out-\(UUID().uuidString)"), folder.file("err-\(UUID().uuidString)"))
        let process = try SpawnedProcess("/usr/bin/nice", ["-n", "19", monsoonBinary] + arguments, directory: folder.path,
                                         environment: environment, output: out, errors: err)
        let deadline = Date().addingTimeInterval(300)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                throw CLITestError("monsoon \(arguments[0]) did not exit within 300 s")
            }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        let result = RunResult(status: process.terminationStatus,
                               output: String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self),
                               errors: String(decoding: FileManager.default.contents(atPath: err) ?? Data(), as: UTF8.self))
        guard let peak = process.maxResidentKilobytes else { throw CLITestError("no resource usage for monsoon \(arguments[0])") }
        return (result, peak)
    }
}
