import Foundation
import MonsoonPodcasts
import Testing

/// Replays the fuzzing corpus (`Tests/Fuzz/<target>/`, grown by `make fuzz`) through the parsers, with
/// the invariants `monsoon-fuzz` checks: every input that once reached new code, or once crashed,
/// keeps being run by every `make test`. Parse errors are fine; a crash fails the whole run.
@Suite struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The contents of every file in `Tests/Fuzz/<target>/`.
    static func inputs(_ target: String) throws -> [(name: String, data: Data)] {
        let folder = corpus.appendingPathComponent(target)
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { name in
            (name, try Data(contentsOf: folder.appendingPathComponent(name)))
        }
    }

    @Test func feeds() throws {
        let inputs = try Self.inputs("feed")
        #expect(!inputs.isEmpty)
        let url = URL(string: "https://user:secret@feeds.example.org/show/feed.xml?token=abc")!
        for (name, data) in inputs {
            guard let feed = try? FeedParser.parse(data, url: url) else { continue }
            #expect((try? JSONSerialization.jsonObject(with: feed.inspectJSON())) != nil, "invalid JSON for \(name)")
        }
    }

    @Test func dates() throws {
        let inputs = try Self.inputs("date")
        #expect(!inputs.isEmpty)
        for (name, data) in inputs {
            guard let date = FeedDate.parse(String(decoding: data, as: UTF8.self)) else { continue }
            // Years 1 to 9999 only: ISO 8601 as written here has four-digit years.
            guard (-62_135_596_800.0 ..< 253_402_300_800.0).contains(date.timeIntervalSince1970) else { continue }
            #expect(FeedDate.parse(FeedDate.iso8601String(date)) == date, "\(name) does not round-trip")
        }
    }

    /// A list that reads must read back the same once written, as `OPML.write` writes it (one without a title
    /// named after its URL).
    @Test func opmlLists() throws {
        let inputs = try Self.inputs("opml")
        #expect(!inputs.isEmpty)
        for (name, data) in inputs {
            guard let outlines = try? OPML.read(data) else { continue }
            let written = OPML.write(outlines)
            let expected = outlines.map { OPML.Outline(title: $0.title ?? $0.feedURL.absoluteString, feedURL: $0.feedURL, siteURL: $0.siteURL) }
            #expect(try OPML.read(Data(written.utf8)) == expected, "\(name) does not round-trip")
        }
    }

    /// No manifest that decodes names a file outside its folder, or the folder itself.
    @Test func manifests() throws {
        let inputs = try Self.inputs("manifest")
        #expect(!inputs.isEmpty)
        for (name, data) in inputs {
            guard let manifest = try? Manifest.decode(data, path: name) else { continue }
            for entry in manifest.files {
                let parts = entry.file.split(separator: "/")
                #expect(!entry.file.hasPrefix("/") && !entry.file.contains("\0") && !parts.contains("..") && parts.contains { $0 != "." },
                        "\(name) lists \(entry.file.debugDescription)")
            }
        }
    }

    @Test func durations() throws {
        let inputs = try Self.inputs("duration")
        #expect(!inputs.isEmpty)
        for (name, data) in inputs {
            let seconds = EpisodeDuration.parse(String(decoding: data, as: UTF8.self))
            #expect((seconds ?? 0) >= 0, "\(name) gives \(seconds ?? 0) s")
        }
    }
}
