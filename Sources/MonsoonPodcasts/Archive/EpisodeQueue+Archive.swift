import Foundation
import MonsoonEngine
import MonsoonStore

extension EpisodeQueue {
    /// A podcast's episodes as an archive run chooses among them, with the ledger.
    public func archiveCandidates(podcast: Int) throws -> [ArchiveSelection.Candidate] {
        try database.statement("""
            SELECT id, coalesce(title, identity), published, feed_order, enclosure_url IS NOT NULL, archived_at IS NOT NULL, file_name, download_state
            FROM episodes WHERE podcast_id = ?
            """).query([podcast]) { row in
            let path = row.text(6)
            let missing = row.text(7) != EpisodeDownloadState.downloaded.rawValue || path.map { EpisodeFiles.size(of: $0) == nil } ?? true
            var candidate = ArchiveSelection.Candidate(id: row.int(0), title: row.text(1) ?? "", published: row.date(2), feedOrder: row.int(3),
                                                       hasEnclosure: row.bool(4), archived: row.bool(5), fileMissing: missing)
            // Archived, and now not downloaded: `delete` reset it (a refetch queues it at once).
            candidate.deleted = row.text(7) == EpisodeDownloadState.none.rawValue
            return candidate
        }
    }

    /// Whether a podcast's feed URL, or a URL of one of its episodes, carries credentials (a user
    /// and password, a token): its feed copy in an archive is then kept private.
    public func carriesCredentials(podcast: Int) throws -> Bool {
        try Self.carriesCredentials(podcast: podcast, in: database)
    }

    /// `carriesCredentials(podcast:)`, on any connection to the library (an `--exec` worker's own).
    public static func carriesCredentials(podcast: Int, in database: Database) throws -> Bool {
        let urls = try database.statement("""
            SELECT p.feed_url FROM podcasts p WHERE p.id = ?1
            UNION ALL SELECT coalesce(enclosure_url, '') || ' ' || coalesce(link, '') || ' ' || coalesce(image_url, '') || ' '
                || coalesce(transcript_url, '') || ' ' || coalesce(chapters_url, '') FROM episodes WHERE podcast_id = ?1
            """).query([podcast]) { $0.text(0) ?? "" }
        return urls.contains { text in text.split(separator: " ").contains { Redaction.redact(String($0)) != $0 } }
    }

    /// The highest episode id so far (0 with none): episodes a refresh adds get higher ones.
    public func highestEpisodeID() throws -> Int {
        try database.scalarInt("SELECT max(id) FROM episodes") ?? 0
    }

    /// A podcast's episodes with an id past `id` that have a media file and were never
    /// downloaded, oldest first: what a refresh brought.
    public func newEpisodes(podcast: Int, after id: Int) throws -> [Int] {
        try database.statement("""
            SELECT id FROM episodes WHERE podcast_id = ? AND id > ? AND enclosure_url IS NOT NULL AND archived_at IS NULL
            ORDER BY published IS NULL, published, feed_order DESC
            """).query([podcast, id]) { $0.int(0) }
    }

    /// Episodes downloaded once whose file has gone, made downloadable again (`--refetch-missing`):
    /// the episode is no longer "downloaded", and the engine forgets the finished download.
    public func forgetMissingDownloads(_ ids: [Int]) throws {
        // The engine's queue first: a failure in between leaves the episodes "downloaded" with
        // their files missing (found again next run), never reset while their finished
        // downloads remain for a reconcile to mark them downloaded again.
        _ = try downloads.forget(ids.map(Self.downloadID(ofEpisode:)), ifIn: [.completed])
        try database.write {
            for id in ids {
                try database.run("""
                    UPDATE episodes SET download_state = 'none', file_name = NULL, bytes_on_disk = 0, sha256 = NULL
                    WHERE id = ? AND download_state = 'downloaded'
                    """, id)
            }
        }
    }
}

extension NamingTemplate {
    /// Whether the template's first folder is the podcast's own alone (`{podcast}/…`, as the default
    /// is): each podcast's files are then in a folder of their own, named `{podcast}`.
    package var startsWithPodcastFolder: Bool {
        components.count > 1 && components[0] == [.variable("podcast")]
    }

    /// The folder under the root that holds all of a podcast's files, when the template's
    /// first folder depends on the podcast alone (`{podcast}/…`); nil when it varies by
    /// episode or there is none.
    public func podcastFolder(_ podcast: String) -> String? {
        guard components.count > 1, let first = components.first,
              first.allSatisfy({ if case .variable(let name) = $0 { return name == "podcast" } else { return true } }) else { return nil }
        let rendered = first.map { part -> String in
            switch part {
            case .literal(let text): return text
            case .variable: return Self.clean(podcast)
            }
        }.joined()
        return finished(rendered, limit: 255)
    }
}

extension PodcastLibrary {
    /// Reads a feed and all its pages without storing anything (an archive's dry run), with
    /// the identities of its episodes already downloaded once, when it is subscribed.
    ///
    /// Unlike subscribing and refreshing, this holds every episode of the feed in memory: the plan
    /// it is for lists them all.
    public func preview(_ url: URL) async throws -> (feed: ParsedFeed, archived: Set<String>, podcastID: Int?) {
        guard var loaded = try await fetcher.load(url, followPages: true) else {
            throw FeedError.make(.empty, "cannot fetch \(Redaction.redact(url)): \(HTTPStatusText.answered(304)) to a first request")
        }
        let feed = try await fetcher.parseAll(&loaded, from: url)
        let finalURL = loaded.first.finalURL
        return try await onDatabase {
            guard let podcast = try podcast(withFeedURL: url) ?? podcast(withFeedURL: finalURL) else { return (feed, [], nil) }
            let archived = try database.statement("SELECT identity FROM episodes WHERE podcast_id = ? AND archived_at IS NOT NULL")
                .query([podcast.id]) { $0.text(0) ?? "" }
            return (feed, Set(archived), podcast.id)
        }
    }
}
