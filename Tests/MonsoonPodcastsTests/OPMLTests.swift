import Foundation
import MonsoonEngine
import Testing
@testable import MonsoonPodcasts

/// `xmllint --noout` on `text`: nil when it is well-formed XML, else xmllint's complaint.
func xmllintComplaint(_ text: String) throws -> String? {
    let path = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-opml-\(UUID().uuidString).xml"
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }   // a scratch file: nothing to keep
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/xmllint")   // Debian's libxml2-utils (make test installs it)
    process.arguments = ["--noout", "--nonet", path]
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    let complaint = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? nil : String(decoding: complaint, as: UTF8.self)
}

/// OPML lists: exports are always well-formed XML, and a list is read whole or not at all.
@Suite struct OPMLTests {
    static let feed = URL(string: "https://example.com/feed.xml")!

    @Test func exportsAreWellFormedWhateverTheTitlesHold() throws {
        let hostile = "Evil\u{1B}[31m red\u{07} bell\u{0} \u{FFFE}\u{FFFF} & <b> \"q\" 'a'"
        let spaced = "tab\there\nline\r\nend  two  spaces"
        let outlines = [OPML.Outline(title: hostile, feedURL: Self.feed, siteURL: URL(string: "https://example.com/?a=1&b=2")),
                        OPML.Outline(title: spaced, feedURL: URL(string: "https://example.com/b.xml?x=1&y=2")!),
                        OPML.Outline(title: "Ünïcödé 🎙 \u{85}", feedURL: URL(string: "https://example.com/c.xml")!)]
        let text = OPML.write(outlines, title: "Mine\u{1B}")
        let complaint = try xmllintComplaint(text)
        #expect(complaint == nil, "\(complaint ?? "")")
        let read = try OPML.read(Data(text.utf8))
        #expect(read.map(\.feedURL) == outlines.map(\.feedURL))
        // What XML cannot hold is left out; tab, line feed and CR survive attribute-value normalization.
        #expect(read[0].title == "Evil[31m red bell  & <b> \"q\" 'a'")
        #expect(read[0].siteURL == URL(string: "https://example.com/?a=1&b=2"))
        #expect(read[1].title == spaced)
        #expect(read[2].title == "Ünïcödé 🎙 \u{85}")
    }

    /// Foundation's XMLParser (recovery mode, no end of input) let all of these through, in part or as an empty list.
    @Test func aListThatBreaksAnywhereIsRefusedWhole() throws {
        let good = "<outline text=\"Good\" xmlUrl=\"https://example.com/good.xml\"/>"
        let cases: [(document: String, line: Int, column: Int, code: OPML.ReadError.Code, says: String)] = [
            ("<?xml version=\"1.0\"?>\n<opml version=\"2.0\"><body>\n\(good)\n<outline text=\"a\u{1B}[31m\u{07}\" xmlUrl=\"https://example.com/evil.xml\"/>\n</body></opml>\n",
             4, 17, .malformed, "the character U+001B, which XML does not allow"),
            ("<opml version=\"2.0\"><body>\(good)<outline text=\"a\u{FFFE}\" xmlUrl=\"https://example.com/x.xml\"/></body></opml>",
             1, 103, .malformed, "the character U+FFFE, which XML does not allow"),
            ("<opml><body><outline", 1, 21, .truncated, "the list ends early"),
            ("<opml><body>\(good)<outline text=\"cut", 1, 91, .truncated, "the list ends early"),
            ("<opml><body>\(good)</body>", 1, 80, .truncated, "the list ends early"),
            ("<opml><body>\(good)</opml>", 1, 80, .malformed, "an end tag that does not match"),
            ("<opml><body>\(good)<outline text=\"&nbsp;\" xmlUrl=\"https://example.com/x.xml\"/></body></opml>", 1, 94, .malformed, "an entity XML does not know"),
        ]
        for (document, line, column, code, says) in cases {
            do {
                let outlines = try OPML.read(Data(document.utf8))
                Issue.record("read \(outlines.count) outline(s) from a broken list: \(document.debugDescription)")
            } catch {
                #expect(error.code == code && error.line == line && error.column == column, "\(error.code) for \(document.debugDescription)")
                #expect(error.message.contains(says), "\(error.message)")
                #expect(error.message.contains("none of it was read"), "\(error.message)")
                #expect(error.message.contains("line \(line), column \(column)"), "\(error.message) for \(document.debugDescription)")
                #expect(!error.message.contains("NSXMLParserErrorDomain") && !error.message.contains("could not be completed"))
            }
        }
        // Bytes that are not UTF-8 in a UTF-8 list are not guessed at, as they are in feeds.
        var bytes = Data("<opml><body><outline text=\"caf".utf8)
        bytes.append(0xE9)
        bytes.append(contentsOf: Data("\" xmlUrl=\"https://example.com/x.xml\"/></body></opml>".utf8))
        #expect(#expect(throws: OPML.ReadError.self) { try OPML.read(bytes) }?.code == .malformed)
    }

    @Test func entitiesAreNeverExpandedNorLoaded() throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-secret-\(UUID().uuidString)")
        try Data("https://example.com/stolen.xml".utf8).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }   // a scratch file
        let external = """
            <?xml version="1.0"?>
            <!DOCTYPE opml [<!ENTITY leak SYSTEM "\(secret.absoluteString)">]>
            <opml><body><outline text="x" xmlUrl="&leak;"/></body></opml>
            """
        let declared = """
            <?xml version="1.0"?>
            <!DOCTYPE opml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
            <opml><body><outline text="&b;" xmlUrl="https://example.com/a.xml"/></body></opml>
            """
        for document in [external, declared] {
            do {
                let outlines = try OPML.read(Data(document.utf8))
                Issue.record("an entity was expanded: \(outlines)")
            } catch {
                #expect(error.message.contains("an entity XML does not know"), "\(error.message)")
            }
        }
        // The five of XML and numeric references are fine.
        let plain = "<opml><body><outline text=\"A &amp; B &#233; &#x1F399;\" xmlUrl=\"https://example.com/a.xml?x=1&amp;y=2\"/></body></opml>"
        let outlines = try OPML.read(Data(plain.utf8))
        #expect(outlines == [OPML.Outline(title: "A & B é 🎙", feedURL: URL(string: "https://example.com/a.xml?x=1&y=2")!)])
    }

    @Test func aListLargerThanTheCapIsRefusedUnparsed() throws {
        let document = Data("<opml><body><outline xmlUrl=\"https://example.com/a.xml\"/></body></opml>".utf8)
        #expect(throws: OPML.ReadError(.tooLarge, "it is \(document.count) B, more than the limit of 32 B for a subscription list; it was not read")) {
            try OPML.read(document, limits: FeedLimits(maxBytes: 32))
        }
        #expect(try OPML.read(document, limits: FeedLimits(maxBytes: document.count)).count == 1)
        #expect(FeedLimits().maxBytes == 50 << 20, "the same cap as feeds")
    }

    /// An outline with more than ``FeedLimits/maxAttributes`` (256) attributes is refused unread (400,000
    /// took 41 s in libxml2), and outlines nested deeper than ``FeedLimits/maxDepth`` (256) where they go past it.
    @Test func aListBuiltAsNoRealListIsRefused() throws {
        func list(attributes: Int) -> Data {
            let extra = (0..<attributes).map { " a\($0)=\"\"" }.joined()
            return Data("<opml version=\"2.0\"><body>\n<outline text=\"A\" xmlUrl=\"https://example.com/a.xml\"\(extra)/></body></opml>".utf8)
        }
        for document in [list(attributes: 255), list(attributes: 400_000)] {
            #expect(throws: OPML.ReadError(.tooComplex, "its <outline> at line 2 has more than 256 attributes, which no real list has, so none of it "
                                           + "was read; fix that line or export the list again", line: 2)) { try OPML.read(document) }
        }
        #expect(try OPML.read(list(attributes: 254)).count == 1)

        let deep = "<opml version=\"2.0\"><body>\n" + String(repeating: "<outline text=\"F\">", count: 300)
            + "<outline xmlUrl=\"https://example.com/a.xml\"/>" + String(repeating: "</outline>", count: 300) + "</body></opml>"
        #expect(throws: OPML.ReadError(.tooComplex, "it nests elements more than 256 deep at line 2, which no real list does, so none of it was "
                                       + "read; fix that line or export the list again", line: 2)) { try OPML.read(Data(deep.utf8)) }
    }

    @Test func encodingsAreReadAsFeedsAreRead() throws {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><opml><body><outline text=\"Café\" xmlUrl=\"https://example.com/a.xml\"/></body></opml>"
        var utf16 = Data([0xFF, 0xFE])
        for unit in text.utf16 { utf16.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)]) }
        #expect(try OPML.read(utf16).first?.title == "Café")
        var latin1 = Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><opml><body><outline text=\"Caf".utf8)
        latin1.append(0xE9)
        latin1.append(contentsOf: Data("\" xmlUrl=\"https://example.com/a.xml\"/></body></opml>".utf8))
        #expect(try OPML.read(latin1).first?.title == "Café")
        // A Mac code page iconv lacks, read as feeds read it.
        var greek = Data("<?xml version=\"1.0\" encoding=\"macgreek\"?><opml><body><outline text=\"".utf8)
        greek.append(contentsOf: [0xE1, 0xE2])
        greek.append(contentsOf: Data("\" xmlUrl=\"https://example.com/a.xml\"/></body></opml>".utf8))
        #expect(try OPML.read(greek).first?.title == "αβ")
        #expect(try OPML.read(Data(([0xEF, 0xBB, 0xBF] + Array(text.replacingOccurrences(of: "UTF-16", with: "UTF-8").utf8)))).first?.title == "Café")
    }

    @Test func whatIsNotAListSaysWhatItIs() throws {
        let what = "an OPML subscription list is an XML file with <opml> at its root"
        let expected: [(String, OPML.ReadError.Code, String)] = [
            ("", .empty, "the file is empty; \(what)"),
            (" \n\t", .empty, "the file is empty; \(what)"),
            ("garbage<", .notOPML, "not an OPML subscription list: it is not well-formed XML (line 1, column 1: no element where the document starts); \(what)"),
            ("<!DOCTYPE html><html><body/></html>", .notOPML, "not an OPML subscription list: it is a web page"),
            ("<rss version=\"2.0\"><channel><title>x</title></channel></rss>", .podcastFeed,
             "it is a podcast feed, not a subscription list: subscribe to its address with 'monsoon add URL'"),
            ("<config><opml/></config>", .notOPML, "not an OPML subscription list: its root element is <config>; \(what)"),
            ("<?xml version=\"1.0\" encoding=\"x-no-such-encoding\"?><opml/>", .unsupportedEncoding,
             "it says its text is in the encoding 'x-no-such-encoding', which this system cannot read; save it as UTF-8"),
        ]
        for (document, code, message) in expected {
            let error = #expect(throws: OPML.ReadError.self) { try OPML.read(Data(document.utf8)) }
            #expect(error?.code == code && error?.message == message, "\(document.debugDescription)")
        }
    }
}
