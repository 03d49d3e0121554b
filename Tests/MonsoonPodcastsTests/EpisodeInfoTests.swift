import Foundation
import Testing
@testable import MonsoonPodcasts

/// `EpisodeInfo`, the sidecar's document: its JSON escapes what it must, and reads back as written.
@Suite struct EpisodeInfoTests {
    @Test func everyControlCharacterIsEscaped() throws {
        var info = EpisodeInfo(download: .init(file: "a.mp3", sourceURL: "https://example.com/a.mp3", finalURL: nil, etag: nil, lastModified: nil,
                                               bytes: 3, sha256: String(repeating: "0", count: 64), downloaded: nil))
        let hostile = "bell\u{07} nul\u{00} esc\u{1B}[2J del\u{7F} line\u{2028} \"q\" \\"
        info.episode = .init(id: 1, title: hostile, guid: "g", published: nil, description: "a\nb\tc\r", link: nil, duration: nil, season: nil,
                             episode: nil, image: nil, chaptersURL: nil, transcriptURL: nil, enclosureURL: nil, mediaType: nil, declaredLength: nil)
        let data = try info.encoded()
        #expect(!data.contains { $0 < 0x20 && $0 != 0x0A }, "raw control bytes only as the layout's line feeds")
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\\u0007") && text.contains("\\u0000") && text.contains("\\u001b[2J") && text.contains("a\\nb\\tc\\r"))
        #expect(try JSONDecoder().decode(EpisodeInfo.self, from: data) == info)
        // Absent fields are left out, not null.
        #expect(!text.contains("null") && !text.contains("\"podcast\""))
    }
}
