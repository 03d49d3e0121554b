import Foundation
import MonsoonEngine

extension FeedFetcher {
    /// What streaming a loaded feed found besides its episodes.
    package struct Streamed: Sendable {
        /// The first page's metadata (its `episodes` empty).
        package var feed: ParsedFeed
        /// The pages read whole, the first included.
        package var pages: Int
        /// Items left out as repeats of earlier ones, over all pages.
        package var duplicates: Int
        /// Why a later page could not be read (fetched or parsed): the pages before it count, it
        /// and the ones after it do not.
        package var pageError: FeedError?
    }

    /// A fetcher with the engine's safety rules and retries, for a feed read by no one waiting
    /// (a host that cannot be reached is tried again, as a refresh does).
    package init(manager: DownloadManager) {
        self.init(manager: manager, limits: FeedLimits())
    }

    /// Hands a loaded feed's episodes to `receive` in batches as they are parsed, page after page
    /// in feed order, deduplicated across pages as the library stores them (the same parser and
    /// identities): memory holds the first page and one later page at a time (read back from its
    /// ``PageFile``), one batch and the identities given out, whatever the feed's size. `receive` gets each batch with its page's number (1 for the first).
    ///
    /// A later page that cannot be parsed ends the pages, as in the library: its episodes handed
    /// out already are the caller's to drop (those of its number), and it is ``Streamed/pageError``.
    ///
    /// - Throws: a ``FeedError`` when the first page cannot be parsed; ``NeedsWalk`` when it names
    ///   a next page that was not fetched (a safety net: ``walk(_:from:maxPages:)``, then stream
    ///   again); what `receive` threw.
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
                    // Parsed once when it was fetched, so it changed meanwhile (or its copy on disk
                    // could not be read back): a page that cannot be read.
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
