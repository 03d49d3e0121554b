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

    @Test func durations() throws {
        let inputs = try Self.inputs("duration")
        #expect(!inputs.isEmpty)
        for (name, data) in inputs {
            let seconds = EpisodeDuration.parse(String(decoding: data, as: UTF8.self))
            #expect((seconds ?? 0) >= 0, "\(name) gives \(seconds ?? 0) s")
        }
    }
}
