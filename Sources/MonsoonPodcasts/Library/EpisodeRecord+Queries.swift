import FoundationEssentials
import MonsoonEngine
import MonsoonStore

// Every statement on `episodes` (with those that read it beside `episode_versions`).

extension EpisodeRecord {
    private static func records(_ clause: String, _ values: [SQLValueConvertible] = [], in database: Database) throws -> [EpisodeRecord] {
        try database.statement("SELECT \(all.list) FROM episodes \(clause)").query(values, reading: Column.self) { EpisodeRecord($0) }
    }

    private static func ids(_ clause: String, _ values: [SQLValueConvertible] = [], in database: Database) throws -> [Int] {
        try database.statement("SELECT id FROM episodes \(clause)").query(values, reading: Column.self) { $0.int(.id) }
    }

    static func find(_ id: Int, in database: Database) throws -> EpisodeRecord? {
        try records("WHERE id = ?", [id], in: database).first
    }

    /// A podcast's episodes, newest first (by publication date, then feed order).
    static func ofPodcast(_ podcast: Int, in database: Database) throws -> [EpisodeRecord] {
        try records("WHERE podcast_id = ? ORDER BY published IS NULL, published DESC, feed_order", [podcast], in: database)
    }

    /// The position of the queue's last episode; nil when it is empty.
    static func lastQueuePosition(in database: Database) throws -> Int? {
        try database.scalarInt("SELECT max(queue_position) FROM episodes")
    }

    /// What adding an episode to the queue looks at, as its whole row would say it (nil: no such episode): three
    /// columns, not the row's every one with its URLs parsed, for each of the thousands an archive queues.
    static func queueing(_ id: Int, in database: Database) throws -> (queued: Bool, downloaded: Bool, hasEnclosure: Bool)? {
        try database.statement("SELECT \(queueingColumns.list) FROM episodes WHERE id = ?").query([id], reading: Column.self) { row in
            (row.optionalInt(.queuePosition) != nil, row.text(.downloadState).flatMap(EpisodeDownloadState.init(rawValue:)) == .downloaded,
             row.text(.enclosureURL).flatMap(URL.init(string:)) != nil)
        }.first
    }

    private static let queueingColumns = Columns<Column>([.queuePosition, .downloadState, .enclosureURL])

    static func queued(in database: Database) throws -> [Episode] {
        try records("WHERE queue_position IS NOT NULL ORDER BY queue_position, id", in: database).map(\.episode)
    }

    /// By podcast, newest first.
    static func downloadedFiles(in database: Database) throws -> [Episode] {
        try records("WHERE download_state = 'downloaded' AND file_name IS NOT NULL ORDER BY podcast_id, published IS NULL, published DESC, id DESC",
                    in: database).map(\.episode)
    }

    /// Not hashed yet: no manifest lists them.
    static func unhashedDownloads(in database: Database) throws -> [Episode] {
        try records("WHERE download_state = 'downloaded' AND file_name IS NOT NULL AND sha256 IS NULL", in: database).map(\.episode)
    }

    static func highestID(in database: Database) throws -> Int {
        try database.scalarInt("SELECT max(id) FROM episodes") ?? 0
    }

    static func downloadedAndPlayed(podcast: Int?, in database: Database) throws -> [Int] {
        try ids("WHERE download_state = 'downloaded' AND played = 1 AND (?1 IS NULL OR podcast_id = ?1) ORDER BY id", [podcast], in: database)
    }

    static func downloaded(podcast: Int, in database: Database) throws -> [Int] {
        try ids("WHERE download_state = 'downloaded' AND podcast_id = ? ORDER BY id", [podcast], in: database)
    }

    static func beyondNewest(_ keep: Int, podcast: Int, in database: Database) throws -> [Int] {
        try ids("WHERE download_state = 'downloaded' AND podcast_id = ? ORDER BY published IS NULL, published DESC, id DESC LIMIT -1 OFFSET ?",
                [podcast, max(0, keep)], in: database)
    }

    /// A podcast's episodes past `id` with a media file, never downloaded, oldest first: what a refresh brought.
    static func new(podcast: Int, after id: Int, in database: Database) throws -> [Int] {
        try ids("WHERE podcast_id = ? AND id > ? AND enclosure_url IS NOT NULL AND archived_at IS NULL ORDER BY published IS NULL, published, feed_order DESC",
                [podcast, id], in: database)
    }

    /// A podcast's episodes past its back catalogue and past the last it queued or downloaded, with a media file, never
    /// queued or downloaded, oldest first: what arrived while nothing took its new episodes.
    static func arrived(podcast: Int, in database: Database) throws -> [Int] {
        let taken = try database.scalarInt("""
            SELECT max(id) FROM episodes WHERE podcast_id = ? AND (archived_at IS NOT NULL OR queue_position IS NOT NULL OR download_state != 'none')
            """, podcast) ?? 0
        let since = max(taken, try PodcastRecord.catalogueEnd(podcast, in: database) ?? 0)
        return try ids("""
            WHERE podcast_id = ? AND id > ? AND enclosure_url IS NOT NULL AND archived_at IS NULL AND queue_position IS NULL AND download_state = 'none'
            ORDER BY published IS NULL, published, feed_order DESC
            """, [podcast, since], in: database)
    }

    static func podcastsWithDownloads(in database: Database) throws -> [Int] {
        try database.statement("SELECT DISTINCT podcast_id FROM episodes WHERE download_state = 'downloaded' ORDER BY podcast_id")
            .query(reading: Column.self) { $0.int(.podcastID) }
    }

    /// The enclosure of the episode whose file is at `path`, else of `guid`'s episode in one of `podcasts`.
    static func enclosure(ofFile path: String, orGUID guid: String?, in podcasts: [Int], database: Database) throws -> String? {
        if let known = try database.scalarText("SELECT enclosure_url FROM episodes WHERE file_name = ?", path) { return known }
        guard let guid else { return nil }
        for podcast in podcasts {
            if let known = try database.scalarText("SELECT enclosure_url FROM episodes WHERE podcast_id = ? AND guid = ?", podcast, guid) { return known }
        }
        return nil
    }

    /// Besides their files'.
    static func urls(ofPodcast podcast: Int, in database: Database) throws -> [String] {
        try database.statement("SELECT enclosure_url, link, image_url, transcript_url, chapters_url FROM episodes WHERE podcast_id = ?")
            .query([podcast], reading: Column.self) { row in
            [row.text(.enclosureURL), row.text(.link), row.text(.imageURL), row.text(.transcriptURL), row.text(.chaptersURL)].compactMap { $0 }
        }.flatMap { $0 }
    }

    /// Whether a file at `path` is an episode's, or a kept version's other than `version`.
    static func namesFile(_ path: String, besidesVersion version: Int, in database: Database) throws -> Bool {
        try database.scalarInt("""
            SELECT (SELECT count(*) FROM episodes WHERE file_name = ?1)
                + (SELECT count(*) FROM episode_versions WHERE file_name = ?1 AND id != ?2 AND status = 'kept')
            """, path, version) ?? 0 > 0
    }

    /// The earlier versions of `podcast`'s episodes (`episode_versions`), each with its row id, in the order they were kept.
    static func earlierVersions(ofPodcast podcast: Int, in database: Database) throws -> [(id: Int, version: EpisodeVersion)] {
        try database.statement("""
            SELECT \(EpisodeVersion.all.list) FROM episode_versions WHERE episode_id IN (SELECT id FROM episodes WHERE podcast_id = ?) ORDER BY id
            """).query([podcast], reading: EpisodeVersion.Column.self) { (id: $0.int(.id), version: EpisodeVersion($0)) }
    }
}

extension EpisodeRecord {
    static func enqueue(_ id: Int, at position: Int, in database: Database) throws {
        try database.run("UPDATE episodes SET queue_position = ?, download_state = 'queued', download_error = NULL WHERE id = ?", position, id)
    }

    /// One not downloaded goes back to none.
    static func dequeue(_ id: Int, in database: Database) throws {
        try database.run("""
            UPDATE episodes SET queue_position = NULL,
                download_state = CASE WHEN download_state IN ('queued', 'downloading', 'paused', 'failed') THEN 'none' ELSE download_state END,
                download_error = NULL
            WHERE id = ?
            """, id)
    }

    static func setQueuePosition(_ position: Int, of id: Int, in database: Database) throws {
        try database.run("UPDATE episodes SET queue_position = ? WHERE id = ?", position, id)
    }

    /// The episode's download was removed from the engine (see `EpisodeQueue.downloadRemoved`).
    static func downloadRemoved(_ id: Int, fileDeleted: Bool, in database: Database) throws {
        try database.run("""
            UPDATE episodes SET
                queue_position = CASE WHEN download_state = 'downloaded' THEN queue_position ELSE NULL END,
                file_name = CASE WHEN download_state = 'downloaded' AND NOT ?2 THEN file_name ELSE NULL END,
                bytes_on_disk = CASE WHEN download_state = 'downloaded' AND NOT ?2 THEN bytes_on_disk ELSE 0 END,
                download_state = CASE WHEN download_state = 'downloaded' AND NOT ?2 THEN 'downloaded' ELSE 'none' END,
                download_error = NULL
            WHERE id = ?1
            """, id, fileDeleted)
    }

    /// A downloaded episode whose file is gone (deleted, or missing): not downloaded any more.
    static func forgetFile(of id: Int, in database: Database) throws {
        try database.run("""
            UPDATE episodes SET download_state = 'none', file_name = NULL, bytes_on_disk = 0, download_error = NULL, sha256 = NULL
            WHERE id = ? AND download_state = 'downloaded'
            """, id)
    }

    /// A played one's position goes back to the start; false when there is no such episode.
    static func setPlayed(_ played: Bool, of id: Int, in database: Database) throws -> Bool {
        try database.run("UPDATE episodes SET played = ?, position = CASE WHEN ? THEN 0 ELSE position END WHERE id = ?", played, played, id)
        return database.changes > 0
    }

    /// False when there is no such episode.
    static func setPosition(_ seconds: Double, of id: Int, in database: Database) throws -> Bool {
        try database.run("UPDATE episodes SET position = ? WHERE id = ?", seconds, id)
        return database.changes > 0
    }

    static func setSHA256(_ sha256: String, of id: Int, in database: Database) throws {
        try database.run("UPDATE episodes SET sha256 = ? WHERE id = ?", sha256, id)
    }

    /// Records the enclosure an episode's file was found to hold (see `scanVersions`).
    static func setFileEnclosure(url: String, length: Int?, of id: Int, in database: Database) throws {
        try database.run("UPDATE episodes SET file_url = ?, file_length = ? WHERE id = ?", url, length, id)
    }

    static func deleteAll(ofPodcast podcast: Int, in database: Database) throws {
        try database.run("DELETE FROM episodes WHERE podcast_id = ?", podcast)
    }

    /// The names earlier versions of an episode, and the episode itself, took (`EpisodeVersion.name(seen:taken:)`).
    static func versionNames(of id: Int, in database: Database) throws -> [String] {
        try database.statement("""
            SELECT version FROM episode_versions WHERE episode_id = ?1 AND version IS NOT NULL
            UNION SELECT version FROM episodes WHERE id = ?1 AND version IS NOT NULL
            """).query([id], reading: EpisodeVersion.Column.self) { $0.text(.version) ?? "" }
    }

    /// The file becomes an earlier version (hashed `sha256` when not yet), the episode one to download again as version
    /// `name`; false when it is not downloaded.
    static func startNewVersion(of id: Int, sha256: String?, name: String, seen: Date, in database: Database) throws -> Bool {
        try database.run("""
            INSERT INTO episode_versions (episode_id, version, seen, url, length, final_url, etag, last_modified, sha256, file_name, bytes, downloaded)
            SELECT id, version, coalesce(version_seen, archived_at), file_url, file_length, final_url, etag, last_modified, coalesce(sha256, ?2),
                file_name, bytes_on_disk, archived_at
            FROM episodes WHERE id = ?1 AND download_state = 'downloaded'
            """, id, sha256)
        guard database.changes == 1 else { return false }
        try database.run("""
            UPDATE episodes SET version = ?2, version_seen = ?3, download_state = 'none', download_error = NULL, file_name = NULL,
                bytes_on_disk = 0, archived_at = NULL, sha256 = NULL, final_url = NULL, etag = NULL, last_modified = NULL,
                file_url = NULL, file_length = NULL, queue_position = NULL
            WHERE id = ?1
            """, id, name, seen)
        return true
    }

    /// In the caller's transaction.
    static func reconcile(_ states: [(episode: Int, state: StoredDownloadState)], in database: Database) throws {
        let statement = try database.statement(reconcileSQL)
        for (episode, state) in states { try statement.run(reconcileValues(of: state, episode: episode)) }
        try statement.bind([])   // cached: left holding no value
    }

    /// Each named for the column it is the download's value of.
    private static func reconcileValues(of state: StoredDownloadState, episode: Int) -> ColumnValues<Column> {
        let error: String? = switch state.status {
        case .failed, .waitingToRetry: state.error?.message
        case .queued where state.error?.code == .notEnoughDiskSpace: state.error?.message
        default: nil
        }
        let episodeState: EpisodeDownloadState = switch state.status {
        case .completed: .downloaded
        case .failed: .failed
        case .paused: .paused
        case .downloading: .downloading
        default: .queued
        }
        var values = ColumnValues<Column>(capacity: Column.allCases.count)
        values[.id] = episode.sqlValue
        values[.downloadState] = episodeState.rawValue.sqlValue
        values[.downloadError] = error.sqlValue
        values[.fileName] = state.filePath.sqlValue
        values[.bytesOnDisk] = state.bytes.sqlValue
        values[.archivedAt] = state.updated.sqlValue
        values[.finalURL] = state.finalURL.sqlValue
        values[.etag] = state.etag.sqlValue
        values[.lastModified] = state.lastModified.sqlValue
        values[.fileURL] = state.url.sqlValue
        return values
    }

    /// A completed download sets its file's fields, other states keep what the episode had; the episode keeps the first
    /// `archived_at`. The enclosure a file holds (`file_url`, `file_length`, which a later feed's is compared with) is the
    /// URL its download was made from, set when it newly completed. Its length is the feed's only while the feed still
    /// lists that URL: else it is unknown, so the next run compares the new enclosure with the file and asks.
    private static let reconcileSQL = """
        UPDATE episodes SET
            download_state = :download_state,
            download_error = :download_error,
            file_name = coalesce(:file_name, file_name),
            bytes_on_disk = CASE WHEN :download_state = 'downloaded' THEN :bytes_on_disk ELSE bytes_on_disk END,
            queue_position = CASE WHEN :download_state = 'downloaded' THEN NULL ELSE queue_position END,
            archived_at = CASE WHEN :download_state = 'downloaded' THEN coalesce(archived_at, :archived_at) ELSE archived_at END,
            final_url = CASE WHEN :download_state = 'downloaded' THEN :final_url ELSE final_url END,
            etag = CASE WHEN :download_state = 'downloaded' THEN :etag ELSE etag END,
            last_modified = CASE WHEN :download_state = 'downloaded' THEN :last_modified ELSE last_modified END,
            sha256 = CASE WHEN :download_state = 'downloaded' AND download_state = 'downloaded' AND file_name IS :file_name THEN sha256 ELSE NULL END,
            file_url = CASE WHEN :download_state = 'downloaded' AND NOT (download_state = 'downloaded' AND file_name IS :file_name AND file_url IS NOT NULL)
                THEN coalesce(:file_url, enclosure_url) ELSE file_url END,
            file_length = CASE WHEN :download_state = 'downloaded' AND NOT (download_state = 'downloaded' AND file_name IS :file_name AND file_url IS NOT NULL)
                THEN (CASE WHEN :file_url IS NULL OR :file_url IS enclosure_url THEN declared_length END) ELSE file_length END
        WHERE id = :id
        """
}

extension EpisodeRecord {
    /// What naming and queueing needs, of every episode at once: the summaries, most of a library's bytes, are left out.
    static let naming = Columns<Column>([.id, .podcastID, .title, .identity, .published, .guid, .season, .episode, .version,
                                         .queuePosition, .enclosureURL, .mediaType, .declaredLength, .downloadState])

    static func forNaming<T>(in database: Database, _ transform: (TableRow<Column>) throws -> T) throws -> [T] {
        try database.statement("SELECT \(naming.list) FROM episodes").query(reading: Column.self, transform)
    }

    /// `podcasts.episode_count`'s subquery.
    static let countPerPodcast = "(SELECT count(*) FROM episodes WHERE episodes.podcast_id = podcasts.id)"
    /// The podcast's last episode so far, in a statement on `podcasts`.
    static let lastPerPodcast = "(SELECT max(id) FROM episodes WHERE episodes.podcast_id = podcasts.id)"
}

extension EpisodeRecord {
    /// In the order of the feed statements' parameters ?4 to ?18 (?1 is the podcast, ?2 the identity, ?3 the feed order).
    static let feedColumns: [Column] = [.guid, .title, .enclosureURL, .mediaType, .declaredLength, .published, .duration, .season,
                                        .episode, .summary, .link, .imageURL, .transcriptURL, .chaptersURL, .transcripts]

    private static func parameter(_ column: Column) -> String { "?\(feedColumns.firstIndex(of: column)! + 4)" }

    private static func feedList(_ each: (String) -> String, separator: String = ", ") -> String {
        feedColumns.map { each($0.sqlName) }.joined(separator: separator)
    }

    /// Under the episode's own identity.
    static func feedValues(of episode: ParsedEpisode, podcast: Int, order: Int) -> [SQLValueConvertible] {
        [podcast, episode.identity, order, episode.guid, episode.title, episode.enclosureURL?.absoluteString, episode.mediaType,
         episode.declaredLength, episode.published, episode.duration, episode.season, episode.episodeNumber, episode.summary,
         episode.link?.absoluteString, episode.imageURL?.absoluteString, episode.transcriptURL?.absoluteString,
         episode.chaptersURL?.absoluteString, EpisodeWriter.transcriptsColumn(episode.transcripts)]
    }

    static let insertSQL = "INSERT INTO episodes (podcast_id, identity, feed_order, \(feedList { $0 })) VALUES ("
        + (1...18).map { "?\($0)" }.joined(separator: ", ") + ")"

    /// A stored row compared with the item in SQLite, on the values bound for the update: no string is made for a row
    /// that did not change.
    enum Lookup: Int, TableColumn {
        case id, feedOrder, sameEnclosure, sameMetadata, enclosureURL
    }

    static let lookupSQL = "SELECT id, feed_order, enclosure_url IS \(parameter(.enclosureURL)) AS same_enclosure, "
        + feedColumns.map { "\($0.sqlName) IS \(parameter($0))" }.joined(separator: " AND ")
        + " AS same_metadata, enclosure_url FROM episodes WHERE podcast_id = ?1 AND identity = ?2"
    static let updateSQL = "UPDATE episodes SET identity = ?2, feed_order = ?3, "
        + feedColumns.map { "\($0.sqlName) = \(parameter($0))" }.joined(separator: ", ") + " WHERE id = ?19"
    static let updateOrderSQL = "UPDATE episodes SET feed_order = ?1 WHERE id = ?2"

    /// The guids recordings share. Recording identities start with `guid:`: a range of the identity index, not a scan.
    static func recordingGUIDs(podcast: Int, in database: Database) throws -> [String] {
        try database.statement("""
            SELECT DISTINCT guid FROM episodes
            WHERE podcast_id = ?1 AND identity >= 'guid:' AND identity < 'guid;' AND guid IS NOT NULL AND identity != guid
            """).query([podcast], reading: Column.self) { $0.text(.guid) ?? "" }
    }

    /// The rows of items that wait (`EpisodeWriter.waitingIdentity`).
    private static let waiting = "podcast_id = ?1 AND identity >= ' waiting ' AND identity < ' waiting!'"

    static func waiting(podcast: Int, guid: String, in database: Database) throws -> [(id: Int, enclosure: String)] {
        try database.statement("SELECT id, enclosure_url FROM episodes WHERE \(waiting) AND guid = ?2")
            .query([podcast, guid], reading: Column.self) { (id: $0.int(.id), enclosure: $0.text(.enclosureURL) ?? "") }
    }

    static func exists(podcast: Int, identity: String, in database: Database) throws -> Bool {
        (try database.scalarInt("SELECT count(*) FROM episodes WHERE podcast_id = ?1 AND identity = ?2", podcast, identity) ?? 0) > 0
    }

    static func delete(_ id: Int, in database: Database) throws {
        try database.run("DELETE FROM episodes WHERE id = ?1", id)
    }

    static func setIdentity(_ identity: String, of id: Int, in database: Database) throws {
        try database.run("UPDATE episodes SET identity = ?1 WHERE id = ?2", identity, id)
    }

    /// Each waiting row left is its plain guid's episode re-uploaded: the plain row takes its metadata and place, and the
    /// waiting row goes; one with no plain row is new.
    static func settleWaiting(podcast: Int, in database: Database) throws -> (updated: Int, added: Int) {
        let updated = try database.scalarInt("""
            SELECT count(*) FROM episodes w JOIN episodes s ON s.podcast_id = w.podcast_id AND s.identity = w.guid
            WHERE w.podcast_id = ?1 AND w.identity >= ' waiting ' AND w.identity < ' waiting!'
                AND NOT (\(feedList({ "s.\($0) IS w.\($0)" }, separator: " AND ")))
            """, podcast) ?? 0
        // Only the plain rows change (not their identities); the waiting rows are only read.
        try database.run("""
            UPDATE episodes SET feed_order = w.feed_order, \(feedList { "\($0) = w.\($0)" })
            FROM (SELECT feed_order, \(feedList { $0 }) FROM episodes WHERE \(waiting)) AS w
            WHERE episodes.podcast_id = ?1 AND episodes.identity = w.guid
            """, podcast)
        try database.run("""
            DELETE FROM episodes WHERE \(waiting) AND EXISTS (SELECT 1 FROM episodes s WHERE s.podcast_id = ?1 AND s.identity = episodes.guid)
            """, podcast)
        // Nothing stored under its guid any more (a row cannot go during a refresh, but if it did): new.
        try database.run("UPDATE episodes SET identity = guid WHERE \(waiting)", podcast)
        return (updated, database.changes)
    }
}
