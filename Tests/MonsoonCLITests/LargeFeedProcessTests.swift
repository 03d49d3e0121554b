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
    /// Well over what streaming needs (about 80 MiB, the program itself 30 of them), well under
    /// what building the whole feed in memory took.
    static let boundKilobytes = 160 * 1024

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

        let add = try MonsoonProcess(["add", url], in: folder.path)
        let added = try await add.finish(seconds: 300)
        #expect(added.status == 0, "\(added.errors)")
        #expect(added.output == "subscribed: 1 Big (\(Self.items) episodes)\n")
        let addPeak = try #require(add.process.maxResidentKilobytes)
        #expect(addPeak < Self.boundKilobytes, "add peaked at \(addPeak / 1024) MiB")

        let refresh = try MonsoonProcess(["refresh"], in: folder.path)
        let refreshed = try await refresh.finish(seconds: 300)
        #expect(refreshed.status == 0, "\(refreshed.errors)")
        #expect(refreshed.output == "Big: 0 new, 0 updated\n")
        let refreshPeak = try #require(refresh.process.maxResidentKilobytes)
        #expect(refreshPeak < Self.boundKilobytes, "refresh peaked at \(refreshPeak / 1024) MiB")
        #expect(server.requests(for: "/big.xml").count == 2, "the refresh read the feed again")

        let podcasts = await runMonsoon(["podcasts", "--json"], in: folder.path)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(podcasts.output.utf8)) as? [[String: Any]])
        #expect(list.first?["episodes"] as? Int == Self.items)
    }
}
