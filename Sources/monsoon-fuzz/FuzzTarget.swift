import Foundation
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
            check((try? JSONSerialization.jsonObject(with: json)) != nil, "inspectJSON() wrote invalid JSON")
        case .date:
            // Invalid UTF-8 is repaired (U+FFFD), as the feed parser's text decoding does before dates are read.
            guard let date = FeedDate.parse(String(decoding: input, as: UTF8.self)) else { return }
            guard Self.fourDigitYears.contains(date.timeIntervalSince1970) else { return }
            let written = FeedDate.iso8601String(date)
            check(FeedDate.parse(written) == date, "\(written) does not read back as the date it was written from")
        case .duration:
            guard let seconds = EpisodeDuration.parse(String(decoding: input, as: UTF8.self)) else { return }
            check(seconds >= 0, "negative duration \(seconds)")
        }
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
