import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// A manifest is written by hand (`Manifest.prettyJSON`) exactly as `JSONEncoder` wrote it, so a manifest written before
/// and one written now differ only where their files do.
@Suite struct ManifestJSONTests {
    /// Text that JSON escapes, or must not: quotes, backslashes, every control character, DEL, slashes, accents
    /// composed and not, emoji, the line and paragraph separators, a noncharacter.
    static let texts: [String] = [
        "", "plain", "with \"quotes\" and \\ backslashes", "a/b/c.mp3", "https://example.com/feed?x=1&y=2",
        String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self), "del \u{7F} here", "café", "cafe\u{301}",
        "😀 ep. 1", "line\u{2028}para\u{2029}", "\u{FFFE}\u{FFFD}", "tab\tnew\nline\rret", "2026-12-07T16:43:44Z",
    ]

    @Test func aManifestIsWrittenAsJSONEncoderWroteIt() throws {
        // Every field is written by name: one added to an entry must be added to `Manifest.Entry.write(into:level:)` too.
        #expect(Mirror(reflecting: Manifest.Entry(kind: "", file: "", size: 0, sha256: "")).children.count == 15)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var generator = SeededGenerator(seed: 48)
        func text() -> String { Self.texts.randomElement(using: &generator)! }
        func maybe() -> String? { Bool.random(using: &generator) ? nil : text() }
        for _ in 0..<400 {
            let files = (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                Manifest.Entry(kind: text(), file: text(), size: [0, 1, 99_999, Int.max].randomElement(using: &generator)!, sha256: text(),
                               guid: maybe(), title: maybe(), sourceURL: maybe(), finalURL: maybe(), etag: maybe(), lastModified: maybe(),
                               downloaded: maybe(), worker: maybe(), node: maybe(), version: maybe(), seen: maybe())
            }
            let manifest = Manifest(podcast: text(), feedURL: text(), generated: text(), files: files)
            let written = manifest.prettyJSON()
            #expect(written == (try encoder.encode(manifest)), "\(String(decoding: written, as: UTF8.self))")
            // Read back as it was, when it is one `Manifest.decode` takes (its files inside its folder).
            if files.allSatisfy({ Manifest.isInside($0.file) && !Manifest.misnamesOwnFile($0) }) {
                #expect(try Manifest.decode(written, path: "manifest") == manifest)
            }
        }
    }
}
