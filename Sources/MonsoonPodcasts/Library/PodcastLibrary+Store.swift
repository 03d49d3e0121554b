import FoundationEssentials
import MonsoonEngine
import MonsoonStore

/// Rolls a feed's transaction back when its first page names a next page that was not fetched: a safety net behind
/// ``FeedFetcher/mayNameNextPage(_:)``. The caller walks the pages, outside any transaction, and stores the feed again.
package struct NeedsWalk: Error {}

extension PodcastLibrary {
    /// Parses a loaded feed's pages into the library, inside the caller's transaction: the episodes in batches
    /// (``EpisodeWriter``), then the podcast's metadata, validators and moves. A feed without a title is named after
    /// `feedURL`, so nothing lists as blank.
    ///
    /// Memory stays bounded: the first page and one later page at a time (read back from their ``PageFile``), one
    /// batch, the identities given out (16 bytes each) and SQLite's page cache, whose overflow goes to the WAL.
    ///
    /// - Returns: what was stored, and the first page's metadata (its `episodes` empty).
    /// - Throws: a ``FeedError`` when the first page cannot be parsed, ``NeedsWalk``, or what the database threw. A later
    ///   page that cannot be parsed ends the pages, undone alone (its savepoint), as ``RefreshSummary/pageError``.
    func store(_ loaded: FeedFetcher.Loaded, podcastID: Int, feedURL: URL, subscribing: Bool) throws -> (summary: RefreshSummary, feed: ParsedFeed) {
        let writer = try EpisodeWriter(database: database, podcastID: podcastID, subscribing: subscribing)
        // Ctrl-C cancels the command's task: the transaction is then given up (rolled back whole) between two batches.
        var stream = EpisodeStream(sink: { batch, _ in
            try Task.checkCancellation()
            try writer.write(batch)
        }, batchSize: batchSize)
        let limits = fetcher.limits
        let feed = try FeedParser.parse(loaded.first.data, url: loaded.first.finalURL, limits: limits, mediaType: loaded.first.mediaType, stream: &stream)
        if let failure = stream.failure { throw failure }
        if feed.nextPageURL != nil, !loaded.walked { throw NeedsWalk() }
        var summary = RefreshSummary(podcastID: podcastID, duplicates: feed.duplicateCount, pages: 1, pageError: loaded.pageError)
        for page in loaded.later {
            let saved = writer.progress
            do {
                let parsed = try database.write { () throws -> ParsedFeed in
                    let number = summary.pages + 1
                    let document = try loaded.document(of: page, number: number)
                    let parsed = try FeedFetcher.parsePage(document, requested: page.finalURL, number: number, limits: limits, stream: &stream)
                    if let failure = stream.failure { throw failure }
                    return parsed
                }
                summary.duplicates += parsed.duplicateCount
                summary.pages += 1
            } catch let error as FeedError {
                // Parsed once when fetched, so it changed meanwhile (or its copy could not be read back): a page that
                // cannot be read, the pages before it kept.
                writer.progress = saved
                summary.pageError = error
                break
            }
        }
        try writer.finish()
        summary.added = writer.progress.added
        summary.updated = writer.progress.updated
        summary.duplicates += writer.progress.leftOut
        if fetcher.keepsDocument { summary.document = loaded.first.data }
        // After a page failed, the validators are not kept: a 304 for the unchanged first page would never retry it.
        let complete = summary.pageError == nil
        // A feed that lost its title or author keeps the ones it had.
        try PodcastRecord.saveFeed(podcastID, feed, etag: complete ? loaded.first.etag : nil, lastModified: complete ? loaded.first.lastModified : nil,
                                   fallbackName: FallbackName.podcast(feedURL: feedURL), error: summary.pageError.map { Redaction.redactText($0.message) },
                                   in: database)
        summary.movedTo = try move(podcastID, loaded: loaded, feed: feed)
        return (summary, feed)
    }

    /// A permanent redirect or `itunes:new-feed-url` moves the subscription, unless the new URL is not http(s) or another
    /// subscription already has it.
    private func move(_ podcastID: Int, loaded: FeedFetcher.Loaded, feed: ParsedFeed) throws -> URL? {
        guard let current = try podcast(withID: podcastID) else { return nil }
        // A redirect that was followed wins over an announcement that was not fetched.
        var target: URL?
        if loaded.first.movedPermanently {
            target = Self.keepingCredentials(of: current.feedURL, in: loaded.first.finalURL)
        } else if let announced = feed.newFeedURL, DownloadRequest.isDownloadable(announced),
                  announced != loaded.first.finalURL {
            target = Self.keepingCredentials(of: current.feedURL, in: announced)
        }
        guard let target, target != current.feedURL, try podcast(withFeedURL: target) == nil else { return nil }
        try PodcastRecord.move(podcastID, to: target, in: database)
        return target
    }
}
