import FoundationEssentials
import MonsoonPodcasts

/// What one fuzz input is fed to: `MONSOON_FUZZ_TARGET` or `--target` chooses.
///
/// Parse failures (a thrown `FeedError`, a nil) are expected answers. What must not happen is a
/// crash, a hang, or a broken invariant (``check(_:_:)``).
enum FuzzTarget: String, Sendable {
    /// `FeedParser.parse(_:url:)` on the bytes as a fetched document, then `inspectJSON()` of what it parsed;
    /// the streaming parse in small batches must give the same feed, and `InspectJSONWriter` the same JSON.
    case feed
    /// `FeedDate.parse(_:)` on the bytes as text.
    case date
    /// `EpisodeDuration.parse(_:)` on the bytes as text.
    case duration
    /// `OPML.read(_:)` on the bytes as a subscription list; what it reads must come back the same through
    /// `OPML.write(_:)` (so that is well-formed XML: the reader refuses anything else).
    case opml
    /// `Manifest.decode(_:path:)` on the bytes as a `monsoon-manifest.json`; no entry it accepts may name a
    /// file outside the manifest's folder.
    case manifest

    /// The base URL of fuzzed feeds. Its credentials and token make `inspectJSON()` redact them.
    private static let feedURL = URL(string: "https://user:secret@feeds.example.org/show/feed.xml?token=abc")!

    /// 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z: `FeedDate.iso8601String(_:)` writes the year in
    /// four digits, so only dates between these round-trip (an offset can push year 1 or 9999 past them).
    private static let fourDigitYears = -62_135_596_800.0 ..< 253_402_300_800.0

    func run(_ input: UnsafeRawBufferPointer) {
        switch self {
        case .feed:
            // A parse that fails is an expected answer (it must only fail the same way streamed).
            let whole = try? FeedParser.parse(Data(input), url: Self.feedURL)
            var episodes: [ParsedEpisode] = []
            var streamedJSON = Data()
            var writer = InspectJSONWriter(chunkSize: 64) { streamedJSON.append($0) }
            // A refused input is an outcome like any other: what is checked is that both parses agree.
            var streamed = try? FeedParser.parse(Data(input), url: Self.feedURL, batchSize: 3) { batch, soFar in
                episodes += batch
                writer.add(batch, feed: soFar)
            }
            check((whole == nil) == (streamed == nil), "the streaming parse and the whole parse disagree on failing")
            guard let feed = whole else { return }
            if let metadata = streamed { writer.finish(metadata) }
            streamed?.episodes = episodes
            check(streamed == feed, "the streaming parse handed out other episodes than the whole parse keeps")
            let json = feed.inspectJSON()
            check(streamedJSON == json, "InspectJSONWriter wrote other bytes than inspectJSON()")
            check((try? JSONDecoder().decode(AnyJSON.self, from: json)) != nil, "inspectJSON() wrote invalid JSON")   // valid or not is all that counts
        case .date:
            // Invalid UTF-8 is repaired (U+FFFD), as the feed parser's text decoding does before dates are read.
            guard let date = FeedDate.parse(String(decoding: input, as: UTF8.self)) else { return }
            guard Self.fourDigitYears.contains(date.timeIntervalSince1970) else { return }
            let written = FeedDate.iso8601String(date)
            check(FeedDate.parse(written) == date, "\(written) does not read back as the date it was written from")
        case .duration:
            guard let seconds = EpisodeDuration.parse(String(decoding: input, as: UTF8.self)) else { return }
            check(seconds >= 0, "negative duration \(seconds)")
        case .opml:
            guard let outlines = try? OPML.read(Data(input)) else { return }   // refusing the input is fine; only a crash is not
            let written = OPML.write(outlines)
            let again: [OPML.Outline]
            do { again = try OPML.read(Data(written.utf8)) } catch { fatalError("OPML.write wrote a list OPML.read refuses (\(error)):\n\(written)") }
            check(again == Self.writtenForm(outlines), "the list does not read back as written:\n\(written)")
        case .manifest:
            guard let manifest = try? Manifest.decode(Data(input), path: "monsoon-manifest.json") else { return }   // refusing it is fine; only a crash is not
            for entry in manifest.files {
                check(Self.staysInside(entry.file), "an entry outside its folder was accepted: \(entry.file.debugDescription)")
            }
        }
    }

    /// `outlines` as `OPML.write(_:)` writes them: one without a title is named after its feed's URL.
    static func writtenForm(_ outlines: [OPML.Outline]) -> [OPML.Outline] {
        outlines.map { OPML.Outline(title: $0.title ?? $0.feedURL.absoluteString, feedURL: $0.feedURL, siteURL: $0.siteURL) }
    }

    /// Whether `file`, taken relative to a folder as the verifier takes it, names something strictly inside
    /// that folder: not absolute, no `..` anywhere (even one that would come back down), no NUL, and not the
    /// folder itself (`.`, `./`).
    static func staysInside(_ file: String) -> Bool {
        guard !file.hasPrefix("/"), !file.contains("\0") else { return false }
        let parts = file.split(separator: "/", omittingEmptySubsequences: true)
        return !parts.contains("..") && parts.contains { $0 != "." }
    }
}

/// The target ``LLVMFuzzerTestOneInput(_:_:)`` feeds. Set once in `main.swift`, before the first input;
/// libFuzzer calls the entry point from a single thread, so nothing races on it.
nonisolated(unsafe) var selectedTarget = FuzzTarget.feed

/// libFuzzer's entry point: one input, `size` bytes at `data`. Returns 0 (libFuzzer reserves other values).
///
/// Public, so the C symbol is exported: libFuzzer's own `main` (linked in, though ours runs) refers to it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    selectedTarget.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// Stops the process with `message` when `condition` is false. Not `precondition`: optimized builds
/// drop its message, and the message is what says which invariant broke.
func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// Any JSON value, read only to learn that the text is JSON.
private enum AnyJSON: Decodable {
    case value

    init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {   // not an array: an object or a scalar
            while !array.isAtEnd { _ = try array.decode(AnyJSON.self) }
        } else if let object = try? decoder.container(keyedBy: Key.self) {   // not an object: a scalar
            for key in object.allKeys { _ = try object.decode(AnyJSON.self, forKey: key) }
        } else {
            let scalar = try decoder.singleValueContainer()
            if !scalar.decodeNil(), (try? scalar.decode(Bool.self)) == nil, (try? scalar.decode(Double.self)) == nil {   // a "no" leads to the next kind
                _ = try scalar.decode(String.self)
            }
        }
        self = .value
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
