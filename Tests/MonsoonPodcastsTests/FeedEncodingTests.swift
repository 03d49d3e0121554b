import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

@Suite struct FeedEncodingTests {
    /// The byte search that finds a feed's declared encoding and the iTunes and Podcast Index
    /// namespaces answers as the standard library's `firstRange(of:)` does, on every slice.
    @Test func theByteSearchFindsWhatTheStandardLibraryFinds() {
        var generator = SeededGenerator(seed: 7)
        let alphabet = Array("<?xml encoding=\"?>ab".utf8)
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            bytes.withUnsafeBufferPointer { buffer in
                let from = Int.random(in: 0...buffer.count, using: &generator)
                let slice = buffer[from..<Int.random(in: from...buffer.count, using: &generator)]
                #expect(ByteScanner.firstRange(of: "<?xml", in: slice) == slice.firstRange(of: "<?xml".utf8), "\(bytes)")
                #expect(ByteScanner.firstRange(of: "?>", in: slice) == slice.firstRange(of: "?>".utf8), "\(bytes)")
                #expect(ByteScanner.firstRange(of: "a", in: slice) == slice.firstRange(of: "a".utf8), "\(bytes)")
            }
        }
    }

    @Test func declaredISO88591() throws {
        let feed = try parseFixture("synthetic/latin1_declared.xml")
        #expect(feed.title == "Café Résumé « Podcast »")
        #expect(feed.episodes[0].title == "Épisode 1 - naïve")
        // Entities decoded once by XML; the HTML stays as text.
        #expect(feed.episodes[0].summary == "<p>Grüße &amp; é ’ &eacute;</p>")
        #expect(try parseFixture("feed-rs/rss_2.0_encoding_1.xml").title == "RSS Feed do Site Inovação Tecnológica")
    }

    @Test func latin1BytesInAFeedThatClaimsUTF8() throws {
        let feed = try parseFixture("synthetic/latin1_undeclared_bytes.xml")
        #expect(feed.title == "Declared UTF-8, actually Latin-1: Café")
        #expect(feed.episodes[0].title == "Naïve")
        // Windows-1252 in the 0x80–0x9F range: curly quotes and the euro sign, among valid UTF-8.
        var bytes = Array(rss("<item><title>X</title><guid>1</guid></item>", channel: "<title>TITLE</title>").utf8)
        let marker = Array("TITLE".utf8)
        let at = try #require(bytes.firstRange(of: marker))
        bytes.replaceSubrange(at, with: [0x93] + Array("Caf".utf8) + [0xE9, 0x94, 0x20, 0x80] + Array(" – ok".utf8))
        let mixed = try FeedParser.parse(Data(bytes), url: URL(string: "https://example.org/f.xml")!)
        #expect(mixed.title == "“Café” € – ok")
    }

    @Test func utf16AndUTF32() throws {
        let utf16 = try parseFixture("synthetic/utf16_podcast.xml")
        #expect(utf16.title == "UTF-16 feed é")
        #expect(utf16.episodes.count == 1)
        #expect(utf16.episodes[0].duration == 3600)
        for file in ["utf-16be-bom.xml", "utf-16le-bom.xml", "utf-16le-autodetect.xml", "utf-32be-bom.xml"] {
            #expect((try? parseFixture("feedparser/encoding/\(file)")) != nil, "\(file)")
        }
        // UTF-16 without a BOM, big-endian, from a string.
        let text = rss("<item><title>Größe</title><guid>1</guid></item>")
        var bigEndian = Data()
        for unit in text.utf16 { bigEndian.append(contentsOf: [UInt8(unit >> 8), UInt8(unit & 0xFF)]) }
        let parsed = try FeedParser.parse(bigEndian, url: URL(string: "https://example.org/f.xml")!)
        #expect(parsed.episodes.first?.title == "Größe")
    }

    @Test func utf8BOM() throws {
        let feed = try parseFixture("synthetic/bom_utf8_podcast.xml")
        #expect(feed.title == "BOM feed")
        #expect(feed.episodes[0].duration == 754)
        #expect(try parseFixture("gofeed/rss_feed_bom.xml").title == "Feed Title")
    }

    @Test func otherDeclaredEncodingsThroughIconv() throws {
        #expect(try parseFixture("feedparser/encoding/euc-kr.xml").title == "\u{B144}")
        #expect(try parseFixture("feedparser/encoding/x80_437.xml").title == "Ç")
        let koi8 = Data([0x3C, 0x3F]) + Data("xml version=\"1.0\" encoding=\"KOI8-R\"?><rss><channel><title>".utf8)
            + Data([0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4]) + Data("</title></channel></rss>".utf8)
        #expect(try FeedParser.parse(koi8, url: URL(string: "https://example.org/f.xml")!).title == "Привет")
    }

    @Test func windows1252Declared() throws {
        let feed = try parseFixture("feedparser/encoding/demoronize-1.xml")
        #expect(feed.episodes.count == 1)
        let smart = Data("<?xml version=\"1.0\" encoding=\"windows-1252\"?><rss><channel><title>".utf8) + Data([0x93, 0x41, 0x94, 0x85])
            + Data("</title></channel></rss>".utf8)
        #expect(try FeedParser.parse(smart, url: URL(string: "https://example.org/f.xml")!).title == "“A”…")
    }

    @Test func unknownEncodingNameReadsAsUTF8() throws {
        let feed = try parseFixture("feedparser/encoding/bozo_bogus_encoding.xml")
        #expect(feed.kind == .rss)
    }

    @Test func decodingUnitDetection() {
        func detect(_ bytes: [UInt8]) -> FeedDecoding.SourceEncoding? {
            bytes.withUnsafeBufferPointer { FeedDecoding.detect($0).0 }
        }
        #expect(detect([0xEF, 0xBB, 0xBF, 0x3C]) == .utf8)
        #expect(detect([0xFE, 0xFF, 0x00, 0x3C]) == .iconv("UTF-16BE", unit: 2))
        #expect(detect([0xFF, 0xFE, 0x3C, 0x00]) == .iconv("UTF-16LE", unit: 2))
        #expect(detect([0x3C, 0x00, 0x3F, 0x00]) == .iconv("UTF-16LE", unit: 2))
        #expect(detect([0x00, 0x00, 0x00, 0x3C]) == .iconv("UTF-32BE", unit: 4))
        #expect(detect([0x3C, 0x3F, 0x78, 0x6D]) == nil)
    }
}

/// Undeclared East Asian encodings, told apart by the text they decode to.
@Suite struct EastAsianEncodingTests {
    @Test(arguments: [("chardet_big5", "BIG5"), ("chardet_gb2312", "GB18030"), ("chardet_eucjp", "EUC-JP"),
                      ("chardet_shiftjis", "SHIFT_JIS"), ("chardet_euckr", "EUC-KR")])
    func theFixturesAreFound(_ name: String, _ encoding: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/feeds/feedparser/encoding/\(name).xml")
        let data = try Data(contentsOf: url)
        let found = data.withUnsafeBytes { FeedDecoding.eastAsianEncoding($0.bindMemory(to: UInt8.self)) }
        #expect(found == encoding)
    }

    /// Latin-1 text whose accented letters also make valid Big5 or Shift_JIS pairs stays Latin-1.
    @Test func latinTextIsNotTakenForChinese() throws {
        let text = "<rss><channel><title>Café été à Noël, où l'on déjeune près du château; très élégant.</title></channel></rss>"
        let bytes = Array(text.unicodeScalars.map { UInt8($0.value) })
        let found = bytes.withUnsafeBufferPointer { FeedDecoding.eastAsianEncoding($0) }
        #expect(found == nil)
        let parsed = try FeedParser.parse(Data(bytes), url: URL(string: "https://example.org/feed.xml")!)
        #expect(parsed.title == "Café été à Noël, où l'on déjeune près du château; très élégant.")
    }
}
