import Foundation
import Testing
@testable import MonsoonPodcasts

/// `EpisodeInfo`, the sidecar's document: its JSON escapes what it must, and reads back as written.
@Suite struct EpisodeInfoTests {
    @Test func everyControlCharacterIsEscaped() throws {
        var info = EpisodeInfo(download: .init(file: "a.mp3", sourceURL: "https://example.com/a.mp3", finalURL: nil, etag: nil, lastModified: nil,
                                               bytes: 3, sha256: String(repeating: "0", count: 64), downloaded: nil))
        let hostile = "bell\u{07} nul\u{00} esc\u{1B}[2J del\u{7F} csi\u{9B}2J nel\u{85} line\u{2028} é \"q\" \\"
        info.episode = .init(id: 1, title: hostile, guid: "g", published: nil, description: "a\nb\tc\r", link: nil, duration: nil, season: nil,
                             episode: nil, image: nil, chaptersURL: nil, transcriptURL: nil, enclosureURL: nil, mediaType: nil, declaredLength: nil)
        let data = try info.encoded()
        #expect(!data.contains { $0 < 0x20 && $0 != 0x0A }, "raw control bytes only as the layout's line feeds")
        // DEL and the C1 controls too (U+0080 to U+009F are C2 80 to C2 9F in UTF-8); é (C3 A9) stays as it is.
        #expect(!data.contains(0x7F) && !zip(data, data.dropFirst()).contains { $0 == 0xC2 && (0x80...0x9F).contains($1) })
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\\u007f") && text.contains("\\u009b2J") && text.contains("\\u0085") && text.contains(" é "))
        #expect(text.contains("\\u0007") && text.contains("\\u0000") && text.contains("\\u001b[2J") && text.contains("a\\nb\\tc\\r"))
        #expect(try JSONDecoder().decode(EpisodeInfo.self, from: data) == info)
        // Absent fields are left out, not null.
        #expect(!text.contains("null") && !text.contains("\"podcast\""))
    }

    @Test func aLongNamesSidecarNameIsCutAndHashedTheSameWayEveryTime() {
        let short = "/a/Episode 1.mp3"
        #expect(InfoSidecar.path(for: short) == "/a/Episode 1.mp3.info.json")
        // 245 bytes: with `.info.json`, 255, the most a name may have: unchanged.
        let fits = "/a/" + String(repeating: "x", count: 241) + ".mp3"
        #expect(InfoSidecar.path(for: fits) == fits + ".info.json")
        // Longer: cut at a whole character, then `~` and eight hex digits of the whole name.
        let long = "/a/" + String(repeating: "長", count: 82) + ".mp3"
        let other = "/a/" + String(repeating: "長", count: 82) + ".m4a"
        let path = InfoSidecar.path(for: long)
        let name = (path as NSString).lastPathComponent
        #expect(path.hasPrefix("/a/") && name.utf8.count <= 255 && name.hasSuffix(".info.json") && name.hasPrefix(String(repeating: "長", count: 78) + "~"))
        #expect(String(decoding: name.utf8, as: UTF8.self) == name, "whole characters")
        #expect(InfoSidecar.path(for: long) == path && InfoSidecar.path(for: other) != path, "the same every time, its own for each file")
    }
}
