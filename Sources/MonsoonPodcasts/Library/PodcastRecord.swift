import FoundationEssentials
import MonsoonStore

/// Every SQL statement on `podcasts`, read into ``Podcast`` or the few columns a caller needs (`Feed`); the schema is
/// `LibrarySchema`'s.
enum PodcastRecord {
    /// With the episode count.
    enum Column: Int, TableColumn {
        case id, feedURL, title, author, description, link, artworkURL, language, lastRefresh, lastError, etag, lastModified,
             folderName, episodeCount
    }

    private static let select = "SELECT \(Columns<Column>.all(except: [.episodeCount]).list), \(EpisodeRecord.countPerPodcast) AS episode_count FROM podcasts"

    static func all(in database: Database) throws -> [Podcast] {
        try database.statement("\(select) ORDER BY id").query(reading: Column.self) { Podcast($0) }
    }

    static func find(_ id: Int, in database: Database) throws -> Podcast? {
        try database.statement("\(select) WHERE id = ?").first([id], reading: Column.self) { Podcast($0) }
    }

    static func find(feedURL url: URL, in database: Database) throws -> Podcast? {
        try database.statement("\(select) WHERE feed_url = ?").first([url.absoluteString], reading: Column.self) { Podcast($0) }
    }

    /// Asked without creating anything.
    static func tableExists(in database: Database) throws -> Bool {
        try database.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'podcasts'") == 1
    }

    /// What naming files, scoping addresses and finding a feed by its redacted URL need, of every podcast at once.
    static func feeds(in database: Database) throws -> [PodcastFolders.Podcast] {
        try database.statement("SELECT id, title, feed_url, folder_name FROM podcasts ORDER BY id").query(reading: Column.self) { row in
            PodcastFolders.Podcast(id: row.int(.id), title: row.text(.title), feedURL: row.text(.feedURL), folderName: row.text(.folderName))
        }
    }

    static func names(in database: Database) throws -> [Int: String] {
        Dictionary(uniqueKeysWithValues: try feeds(in: database).map { ($0.id, $0.name) })
    }

    /// Before its feed is stored.
    static func insert(feedURL: URL, etag: String?, lastModified: String?, in database: Database) throws -> Int {
        try database.run("INSERT INTO podcasts (feed_url, etag, last_modified, last_refresh, added) VALUES (?, ?, ?, ?, ?)",
                         feedURL.absoluteString, etag, lastModified, Date(), Date())
        return database.lastInsertRowID
    }

    /// Its episodes so far are its back catalogue (`LibrarySchema` version 6).
    static func markCatalogueEnd(_ podcast: Int, in database: Database) throws {
        try database.run("UPDATE podcasts SET catalogue_end = \(EpisodeRecord.lastPerPodcast) WHERE id = ?", podcast)
    }

    static func catalogueEnd(_ podcast: Int, in database: Database) throws -> Int? {
        try database.scalarInt("SELECT catalogue_end FROM podcasts WHERE id = ?", podcast)
    }

    /// A feed that lost its title or author keeps the ones it had; one that never had a title is named `fallbackName`.
    static func saveFeed(_ podcast: Int, _ feed: ParsedFeed, etag: String?, lastModified: String?, fallbackName: String, error: String?,
                         in database: Database) throws {
        try database.run("""
            UPDATE podcasts SET title = coalesce(?2, title, ?12), author = coalesce(?3, author), description = coalesce(?4, description),
                link = coalesce(?5, link), artwork_url = coalesce(?6, artwork_url), language = coalesce(?7, language),
                podcast_guid = coalesce(?8, podcast_guid), etag = ?9, last_modified = ?10, last_refresh = ?11, last_error = ?13 WHERE id = ?1
            """, podcast, feed.title, feed.author, feed.description, feed.link?.absoluteString, feed.artworkURL?.absoluteString,
            feed.language, feed.podcastGUID, etag, lastModified, Date(), fallbackName, error)
    }

    /// The old URL's validators are forgotten.
    static func move(_ podcast: Int, to url: URL, in database: Database) throws {
        try database.run("UPDATE podcasts SET feed_url = ?, etag = NULL, last_modified = NULL WHERE id = ?", url.absoluteString, podcast)
    }

    /// The feed was not modified: refreshed now, without error.
    static func refreshedUnchanged(_ podcast: Int, in database: Database) throws {
        try database.run("UPDATE podcasts SET last_refresh = ?, last_error = NULL WHERE id = ?", Date(), podcast)
    }

    static func setLastError(_ message: String, of podcast: Int, in database: Database) throws {
        try database.run("UPDATE podcasts SET last_error = ? WHERE id = ?", message, podcast)
    }

    /// Its `{podcast}` in file names, fixed from then on (`PodcastFolders`).
    static func setFolderName(_ name: String, of podcast: Int, in database: Database) throws {
        try database.run("UPDATE podcasts SET folder_name = ? WHERE id = ?", name, podcast)
    }

    static func delete(_ podcast: Int, in database: Database) throws {
        try database.run("DELETE FROM podcasts WHERE id = ?", podcast)
    }
}

extension Podcast {
    init(_ row: TableRow<PodcastRecord.Column>) {
        id = row.int(.id)
        feedURL = URL(string: row.text(.feedURL) ?? "") ?? URL(string: "invalid:")!
        title = row.text(.title)
        author = row.text(.author)
        description = row.text(.description)
        link = row.text(.link).flatMap(URL.init(string:))
        artworkURL = row.text(.artworkURL).flatMap(URL.init(string:))
        language = row.text(.language)
        lastRefresh = row.date(.lastRefresh)
        lastError = row.text(.lastError)
        etag = row.text(.etag)
        lastModified = row.text(.lastModified)
        episodeCount = row.int(.episodeCount)
    }
}
