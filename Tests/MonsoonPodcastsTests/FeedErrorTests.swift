import Foundation
import Testing
@testable import MonsoonPodcasts

@Suite struct FeedErrorTests {
    @Test func emptyBodies() {
        #expect(feedError(Data())?.code == .empty)
        #expect(feedError(Data("  \n\t ".utf8))?.code == .empty)
        #expect(feedError(Data([0xEF, 0xBB, 0xBF]))?.code == .empty)
        #expect(feedError(Data("<?xml version=\"1.0\"?>\n<!-- nothing -->\n".utf8))?.code == .empty)
    }

    /// Binary documents say what they are, from their first bytes, not "Document is empty".
    @Test(arguments: [
        ([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x3C, 0x00], "an image (JPEG)"),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x3C], "an image (PNG)"),
        (Array("ID3\u{03}\u{00}\u{00}<rss>".utf8), "audio (MP3)"),
        ([0xFF, 0xFB, 0x90, 0x64, 0x3C, 0x3F], "audio (MP3)"),
        ([0x00, 0x00, 0x00, 0x20] + Array("ftypM4A isom".utf8), "audio (M4A)"),
        (Array("%PDF-1.7\n<< /Type /Catalog >>".utf8), "a PDF document"),
        (Array("PK\u{03}\u{04}\u{14}\u{00}".utf8), "a ZIP archive"),
        (Array("{\"version\": \"https://jsonfeed.org/version/1.1\", \"items\": []}".utf8), "a JSON document"),
        ([0x00, 0x01, 0x02, 0x3C, 0x03, 0x00, 0x9F, 0x10], "a binary file, not text"),
    ] as [([UInt8], String)])
    func binaryDocumentsSayWhatTheyAre(_ bytes: [UInt8], _ kind: String) throws {
        let error = try #require(feedError(Data(bytes), url: "https://user:pw@media.example.org/file?token=abc"))
        #expect(error.code == .notAFeed)
        #expect(error.message == "the document at https://***:***@media.example.org/file?token=*** is not a feed (RSS or Atom): it is \(kind)")
    }

    /// Without telling bytes, the server's media type says what a document is; text stays a parse error.
    @Test func theMediaTypeNamesWhatTheBytesDoNot() throws {
        let error = try #require(throws: FeedError.self) {
            try FeedParser.parse(Data("GIF-like but not quite <".utf8), url: URL(string: "https://cdn.example.org/cover")!, mediaType: "image/webp; q=1")
        }
        #expect(error.message == "the document at https://cdn.example.org/cover is not a feed (RSS or Atom): it is an image (WEBP)")
        let text = try #require(throws: FeedError.self) {
            try FeedParser.parse(Data("<rss><channel><title>x</channel></rss>".utf8), url: URL(string: "https://x.example/f")!, mediaType: "application/rss+xml")
        }
        #expect(text.code == .malformed)
        #expect(feedError(Data("<rss version=\"2.0\"><channel/></rss>".utf16BigEndianWithBOM))?.code == nil, "UTF-16 text is not binary")
    }

    @Test func htmlPageNamesItsFeed() throws {
        let page = """
            <!DOCTYPE html><html><head><meta charset="utf-8"><title>My Show</title>
            <link rel="stylesheet" href="/s.css"><link rel="alternate" type="application/atom+xml" href="feeds/atom.xml?a=1&amp;b=2">
            </head><body><p>Hello<br></body></html>
            """
        let error = try #require(feedError(Data(page.utf8), url: "https://www.example.org/show/"))
        #expect(error.code == .htmlPage)
        #expect(error.alternateFeedURL?.absoluteString == "https://www.example.org/show/feeds/atom.xml?a=1&b=2")
        #expect(error.message.contains("My Show") && error.message.contains("https://www.example.org/show/feeds/atom.xml"))
        let fixture = try #require(feedError(try Data(contentsOf: URL(fileURLWithPath: fixturePath("synthetic/html_instead_of_feed.html"))),
                                             url: "https://podcast.example.com/old/page.html"))
        #expect(fixture.alternateFeedURL?.absoluteString == "https://podcast.example.com/feed.xml")
    }

    /// A private feed's page: the link inherits the credentials, which the message must not show.
    @Test func htmlPageMessagesHideCredentials() throws {
        let page = "<html><head><link rel=\"alternate\" type=\"application/rss+xml\" href=\"/private/feed.rss\"></head></html>"
        let error = try #require(feedError(Data(page.utf8), url: "https://jane:s3cret@members.example.org/show"))
        #expect(error.alternateFeedURL?.absoluteString == "https://jane:s3cret@members.example.org/private/feed.rss")
        #expect(!error.message.contains("s3cret") && !error.message.contains("jane"))
        #expect(error.message.contains("https://members.example.org/private/feed.rss"))
    }

    @Test func htmlPageWithoutAFeed() throws {
        let error = try #require(feedError(try Data(contentsOf: URL(fileURLWithPath: fixturePath("synthetic/cloudflare_challenge.html")))))
        #expect(error.code == .htmlPage)
        #expect(error.alternateFeedURL == nil)
        #expect(error.message.contains("Just a moment..."))
        // Well-formed XHTML too.
        #expect(feedError(Data("<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>t</title></head><body/></html>".utf8))?.code == .htmlPage)
    }

    @Test func xmlThatIsNotAFeed() throws {
        let error = try #require(feedError(Data("<?xml version=\"1.0\"?><note><to>Tove</to></note>".utf8)))
        #expect(error.code == .notAFeed)
        #expect(error.message.contains("<note>"))
        let opml = try #require(feedError(Data("<opml version=\"2.0\"><body><outline xmlUrl=\"https://e.example/f\"/></body></opml>".utf8)))
        #expect(opml.code == .notAFeed)
        #expect(opml.message.contains("OPML"))
    }

    @Test func malformedWithLineAndColumn() throws {
        let xml = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\">\n<channel>\n<title>T</titel>\n</channel></rss>\n"
        let error = try #require(feedError(Data(xml.utf8)))
        #expect(error.code == .malformed)
        #expect(error.line == 4)
        #expect(error.column != nil)
        #expect(error.message.contains("line 4"))
        #expect(error.description == error.message)
    }

    @Test func truncatedDownloads() throws {
        let error = try #require(feedError(try Data(contentsOf: URL(fileURLWithPath: fixturePath("synthetic/truncated.xml")))))
        #expect(error.code == .malformed)
        #expect(error.line == 4)
        #expect(error.message.contains("ends early"))
    }

    @Test func unreadableFiles() {
        #expect(throws: FeedError(.unreadable, "no such file: /nonexistent/feed.xml")) { try FeedParser.parse(fileAt: "/nonexistent/feed.xml") }
        do {
            _ = try FeedParser.parse(fileAt: NSTemporaryDirectory())
            Issue.record("a folder parsed")
        } catch {
            #expect(error.code == .unreadable)
        }
    }

    @Test func fetchingCodesExist() {
        let codes: [FeedError.Code] = [.invalidURL, .unsupportedScheme, .network, .httpStatus]
        #expect(codes.map(\.rawValue) == ["invalidURL", "unsupportedScheme", "network", "httpStatus"])
        let status = FeedError(.httpStatus, "The server answered 404 Not Found.", httpStatus: 404)
        #expect(status.httpStatus == 404)
    }

    /// Another program truncating and rewriting the feed file while it is parsed: each parse gives a
    /// feed or an error, never a crash (a mapped file would kill the process with SIGBUS here).
    @Test func aFileTruncatedDuringTheParseIsAnErrorNotACrash() throws {
        var items = ""
        for index in 0..<8_000 {
            items += "<item><guid>g\(index)</guid><title>Episode \(index)</title><description>\(String(repeating: "notes ", count: 40))</description></item>\n"
        }
        let document = Data(rss(items).utf8)
        #expect(document.count > 2 << 20, "larger than the 1 MB from which files used to be mapped")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-truncated-\(UUID().uuidString).xml").path
        try document.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let stop = Atomic(false)
        let writer = Thread {
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            defer { close(descriptor) }
            var round = 0
            while !stop.value {
                // Cut the file to a random length, then write it whole again, in place.
                ftruncate(descriptor, off_t(round * 7919 % document.count))
                document.withUnsafeBytes { _ = pwrite(descriptor, $0.baseAddress, $0.count, 0) }
                round += 1
            }
        }
        writer.start()
        defer { stop.value = true }
        var parsed = 0, failed = 0
        for _ in 0..<30 {
            do {
                _ = try FeedParser.parse(fileAt: path)
                parsed += 1
            } catch {
                failed += 1
                #expect([.malformed, .empty, .notAFeed].contains(error.code), "\(error.message)")
            }
        }
        #expect(parsed + failed == 30)
    }
}

private extension String {
    var utf16BigEndianWithBOM: [UInt8] {
        [0xFE, 0xFF] + utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}

/// A flag shared with a writer thread.
private final class Atomic: @unchecked Sendable {
    // Unchecked: every access holds the lock.
    private let lock = NSLock()
    private var stored: Bool
    init(_ value: Bool) { stored = value }
    var value: Bool {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
