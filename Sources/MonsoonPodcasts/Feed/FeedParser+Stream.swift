import Foundation

/// How a parse hands out its episodes: to a sink in batches as they are read, or kept in
/// ``ParsedFeed/episodes``; and the identities given out so far, which the pages of one feed share.
struct EpisodeStream {
    /// Takes a batch of episodes, in feed order, with the feed's metadata read so far.
    typealias Sink = ([ParsedEpisode], ParsedFeed) throws -> Void

    /// Where episodes go; nil keeps them in the parsed feed.
    var sink: Sink?
    /// Episodes a batch; the last one of a document may be smaller.
    var batchSize = Int.max
    /// The identities given out in this feed so far: a page is deduplicated against the pages
    /// before it (see ``EpisodeIdentity/Registry``).
    var registry = EpisodeIdentity.Registry()
    /// What the sink threw: the parse stopped there.
    var failure: (any Error)?
}

extension FeedParser {
    /// The number of episodes handed out at a time by the streaming parses.
    public static let defaultBatchSize = 1_000

    /// Parses one document, handing its episodes to `receive` in batches of at most `batchSize` as
    /// they are read, in feed order, instead of keeping them all: a feed of a million items is read
    /// in the memory of its text and one batch. Items that repeat an earlier one are left out, as
    /// ``parse(_:url:limits:mediaType:)`` leaves them out.
    ///
    /// `receive` gets each batch with the feed's metadata read so far (its `episodes` empty); the
    /// title is final once it is not nil, other fields may come later in the document. Episodes
    /// handed out before the document turns out to be broken are not taken back: the error is
    /// thrown after them.
    ///
    /// - Returns: the feed's metadata, its `episodes` empty and ``ParsedFeed/duplicateCount``
    ///   counting the items left out.
    /// - Throws: a ``FeedError`` when the document cannot be read (as the non-streaming parse
    ///   throws it), or what `receive` threw: the parse stops at once.
    public static func parse(_ data: Data, url: URL, limits: FeedLimits = FeedLimits(), mediaType: String? = nil,
                             batchSize: Int = defaultBatchSize,
                             episodes receive: ([ParsedEpisode], ParsedFeed) throws -> Void) throws -> ParsedFeed {
        try withoutActuallyEscaping(receive) { receive in
            var stream = EpisodeStream(sink: receive, batchSize: max(1, batchSize))
            let feed = try parse(data, url: url, limits: limits, mediaType: mediaType, stream: &stream)
            if let failure = stream.failure { throw failure }
            return feed
        }
    }

    /// Parses the file at `path` as ``parse(fileAt:limits:)`` does, handing its episodes to
    /// `receive` in batches as ``parse(_:url:limits:mediaType:batchSize:episodes:)`` does.
    public static func parse(fileAt path: String, limits: FeedLimits = FeedLimits(), batchSize: Int = defaultBatchSize,
                             episodes receive: ([ParsedEpisode], ParsedFeed) throws -> Void) throws -> ParsedFeed {
        try withoutActuallyEscaping(receive) { receive in
            var stream = EpisodeStream(sink: receive, batchSize: max(1, batchSize))
            let feed = try parse(fileAt: path, limits: limits, stream: &stream)
            if let failure = stream.failure { throw failure }
            return feed
        }
    }
}
