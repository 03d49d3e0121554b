import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// The podcasts every worker archives, in PostgreSQL: feeds with the rules of the `archive` that
/// added them, and the episodes their refreshes queued (see ``ClusterRefresh``).
public enum SharedLibrary {
    /// A feed `addFeeds` was given.
    public struct AddedFeed: Sendable, Hashable {
        /// The feed's id (`monsoon_feeds.id`).
        public var feedID: Int64
        public var url: URL
        /// The feed was new to the library (else its rules were replaced).
        public var isNew: Bool
        /// Its refresh was queued now: added, or made available again after it finished. False:
        /// one is waiting or running already, and reads the feed with the new rules if it has not begun.
        public var refreshQueued: Bool
    }

    /// Adds feeds with `rules` and queues a refresh of each, in one transaction: safe to run from
    /// many machines at once (one row per URL, one job per feed: `refresh:<feed id>`).
    ///
    /// A feed already there keeps its id, its folder and its episodes, and takes `rules`: the
    /// latest `archive` of a feed sets what its next refreshes choose and how they name files
    /// (episodes queued before keep their names, and those still waiting take its size cap; new
    /// rules make the next refresh read the feed whole, without validators). Its refresh is
    /// queued again when the last one finished; one waiting or running is left to run (a refresh
    /// that began with the old rules queues itself again when it finds them changed).
    ///
    /// - Parameter urls: http or https URLs; one given twice counts once.
    /// - Returns: each distinct URL's feed, in the order given.
    /// - Throws: `SharedLibraryError` (`.invalidRules`, `.invalidFeedURL`) before anything is
    ///   written, or the `PostgresError` that undid the transaction.
    public static func addFeeds(_ urls: [URL], rules: ArchiveRules, on connection: PostgresConnection) throws -> [AddedFeed] {
        try rules.validate()
        var seen = Set<String>()
        let urls = urls.filter { seen.insert($0.absoluteString).inserted }
        for url in urls where !DownloadRequest.isDownloadable(url) {
            throw SharedLibraryError(.invalidFeedURL, "\(Redaction.redact(url)) is not an http or https URL; give the feed's full address, like https://example.com/feed.xml")
        }
        guard !urls.isEmpty else { return [] }
        return try connection.transaction { () throws(PostgresError) -> [AddedFeed] in
            // In the order of the URLs: two transactions that add the same feeds wait for each
            // other's rows in one order, never in a cycle. New rules drop the validators: the
            // next refresh reads the feed whole (a 304 would choose nothing by them). `xmax = 0`:
            // the row was inserted here.
            let rows = try connection.execute("""
                INSERT INTO monsoon_feeds AS f (url, rules)
                SELECT u, $2::jsonb FROM unnest($1::text[]) AS u ORDER BY u
                ON CONFLICT (url) DO UPDATE SET rules = excluded.rules,
                    etag = CASE WHEN f.rules = excluded.rules THEN f.etag END,
                    last_modified = CASE WHEN f.rules = excluded.rules THEN f.last_modified END
                RETURNING f.id, f.url, f.xmax = 0 AS inserted
                """, [PostgresArray(urls.map { Optional($0.absoluteString) }), rules.json])
            var feeds: [String: (id: Int64, isNew: Bool)] = [:]
            for row in rows.rows {
                guard let id = try row.int64("id"), let url = try row.string("url") else { continue }
                feeds[url] = (id, try row.bool("inserted") ?? false)
            }
            // Downloads queued by the old rules wait under the new size cap.
            try JobQueue.setMaxBytes(rules.maxSize, ofFeeds: feeds.values.filter { !$0.isNew }.map(\.id).sorted(), on: connection)
            let jobs = urls.compactMap { url in feeds[url.absoluteString].map { NewJob.refresh(feedID: $0.id, url: url) } }
            let queued = try JobQueue.queue(jobs, on: connection, rearmingFinished: true)
            return urls.compactMap { url in
                feeds[url.absoluteString].map { AddedFeed(feedID: $0.id, url: url, isNew: $0.isNew, refreshQueued: queued.contains("refresh:\($0.id)")) }
            }
        }
    }
}
