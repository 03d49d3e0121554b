import FoundationEssentials

/// How a parse hands out its episodes (to a sink in batches, or kept in ``ParsedFeed/episodes``), and the identities
/// given out so far, which the pages of one feed share.
struct EpisodeStream {
    /// A batch in feed order, with the feed's metadata read so far.
    typealias Sink = ([ParsedEpisode], ParsedFeed) throws -> Void

    /// Nil keeps them in the parsed feed.
    var sink: Sink?
    var batchSize = Int.max
    /// A page is deduplicated against the pages before it.
    var registry = EpisodeIdentity.Registry()
    /// The parse stopped there.
    var failure: (any Error)?
}

extension FeedParser {
    public static let defaultBatchSize = 1_000

    /// As ``parse(_:url:limits:mediaType:)``, handing the episodes to `receive` in batches as they are read instead of
    /// keeping them: a feed of a million items is read in the memory of its text and one batch.
    ///
    /// Each batch comes with the feed's metadata read so far (its `episodes` empty): the title is final once not nil,
    /// other fields may come later. Episodes handed out before the document turns out broken are not taken back.
    ///
    /// - Returns: the feed's metadata, its `episodes` empty.
    /// - Throws: a ``FeedError`` when the document cannot be read, or what `receive` threw: the parse stops at once.
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

    /// ``parse(fileAt:limits:)`` in batches, as ``parse(_:url:limits:mediaType:batchSize:episodes:)``.
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
