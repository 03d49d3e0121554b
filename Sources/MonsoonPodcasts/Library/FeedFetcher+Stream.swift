import FoundationEssentials
import MonsoonEngine

extension FeedFetcher {
    /// What streaming a loaded feed found besides its episodes.
    package struct Streamed: Sendable {
        /// The first page's metadata.
        package var feed: ParsedFeed
        package var pages: Int
        package var duplicates: Int
        /// A later page could not be read (fetched or parsed): the pages before it count.
        package var pageError: FeedError?
    }

    /// With retries, for a feed no one waits for.
    package init(manager: DownloadManager) {
        self.init(manager: manager, limits: FeedLimits())
    }

    /// Hands a loaded feed's episodes to `receive` in batches, page after page, with the page's number (1 for the first),
    /// deduplicated across pages as the library stores them, in the library's bounded memory.
    ///
    /// A later page that cannot be parsed ends the pages, as in the library: its episodes handed out already are the
    /// caller's to drop (those of its number), and it is ``Streamed/pageError``.
    ///
    /// - Throws: a ``FeedError`` when the first page cannot be parsed; ``NeedsWalk``; what `receive` threw.
    package func stream(_ loaded: Loaded, batchSize: Int = FeedParser.defaultBatchSize,
                        episodes receive: ([ParsedEpisode], Int) throws -> Void) throws -> Streamed {
        var page = 1
        return try withoutActuallyEscaping(receive) { receive in
            var stream = EpisodeStream(sink: { batch, _ in try receive(batch, page) }, batchSize: max(1, batchSize))
            let feed = try FeedParser.parse(loaded.first.data, url: loaded.first.finalURL, limits: limits, mediaType: loaded.first.mediaType, stream: &stream)
            if let failure = stream.failure { throw failure }
            if feed.nextPageURL != nil, !loaded.walked { throw NeedsWalk() }
            var streamed = Streamed(feed: feed, pages: 1, duplicates: feed.duplicateCount, pageError: loaded.pageError)
            for later in loaded.later {
                page += 1
                do throws(FeedError) {
                    let document = try loaded.document(of: later, number: page)
                    let parsed = try Self.parsePage(document, requested: later.finalURL, number: page, limits: limits, stream: &stream)
                    streamed.duplicates += parsed.duplicateCount
                } catch {
                    // Parsed once when fetched, so it changed meanwhile (or its copy could not be read back).
                    streamed.pageError = error
                    break
                }
                if let failure = stream.failure { throw failure }
                streamed.pages = page
            }
            return streamed
        }
    }
}
