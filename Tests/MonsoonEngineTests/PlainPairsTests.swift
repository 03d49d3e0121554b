import Foundation
import Testing
@testable import MonsoonEngine

/// A row's headers and user info are written by hand (`DownloadRecord.encode`), byte for byte as
/// `JSONEncoder` wrote them, and read by hand when no string holds an escape (`plainPairs`); the
/// rest is left to `JSONDecoder`. Either way the pairs written are read back.
@Suite struct PlainPairsTests {
    @Test func plainPairsAreReadAsJSONDecoderReadsThem() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let values = ["42", "", "Épisode 7 – 🎙️", "a:b,c}", "{\"", "line\nbreak", "back\\slash", "a/b", "https://example.com/e/1", "\u{1}", "tab\t", " spaced ", "\u{7F}", "\u{2028}", "\u{85}"]
        var checked = 0
        for key in ["episode", "title", "", "k\"ey", "ü"] {
            for value in values {
                for pairs in [[key: value], [key: value, "other": "x"], [key: value, "z": value, "a": "1"]] {
                    let text = DownloadRecord.encode(pairs)
                    #expect(Data(text.utf8) == (try encoder.encode(pairs)), "as JSONEncoder wrote it: \(text)")
                    let decoded = try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
                    #expect(decoded == pairs, "written as valid JSON: \(text)")
                    if let plain = DownloadRecord.plainPairs(text) {
                        #expect(plain == decoded, "\(text)")
                        checked += 1
                    } else {
                        #expect(text.contains("\\"), "only an escape sends a row to JSONDecoder: \(text)")
                    }
                }
            }
        }
        #expect(checked > 50, "most are read off the bytes")
    }

    @Test func anythingElseIsLeftToJSONDecoder() {
        for text in ["", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":\"b\"", "{\"a\":\"b\",}", "{\"a\":1}", "{ \"a\":\"b\"}", "[\"a\"]", "{\"a\":\"b\"}x",
                     "{\"a\":\"b\nc\"}", "{\"a\":\"\t\"}", "{\"a\":\"1\",\"a\":\"2\"}", "{\"u\":\"a\\/b\"}"] {
            #expect(DownloadRecord.plainPairs(text) == nil, "\(text)")
        }
    }

    /// A row an earlier Monsoon wrote with JSONEncoder's escaped slashes reads back through JSONDecoder.
    @Test func aRowWrittenWithEscapedSlashesReadsBack() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let store = try DownloadStore(path: folder.file("queue.sqlite"))
        let ids = try store.add([DownloadRequest(id: "", url: try #require(URL(string: "https://example.com/a")), destination: .directory(folder.path),
                                                 userInfo: ["u": "x"])])
        try store.database.run("UPDATE downloads SET user_info = ? WHERE id = ?", #"{"u":"https:\/\/x"}"#, ids[0].rawValue)
        #expect(try store.download(withID: ids[0])?.request.userInfo == ["u": "https://x"])
    }
}
