import FoundationEssentials
import MonsoonEngine
import MonsoonStore

/// A file downloaded from one enclosure, kept beside the later ones when the feed republished the episode
/// (see ``VersionCheck``).
public struct EpisodeVersion: Sendable, Equatable {
    public enum Status: String, Sendable {
        /// The newest version, downloaded.
        case current
        /// The newest version, not downloaded yet.
        case pending
        /// An earlier version, its file kept.
        case kept
        /// An earlier version whose file was deleted once the newer one was in (`--versions latest`).
        case replaced
    }

    public var episodeID: Int
    /// Its `{version}`: nil for the first, else the day it was seen (`2026-12-01`, `2026-12-01-2` for a second that day).
    public var name: String?
    /// When it was seen: for the first, when it was downloaded.
    public var seen: Date?
    /// The enclosure URL the feed listed.
    public var url: String?
    public var length: Int?
    /// After redirects.
    public var finalURL: String?
    public var etag: String?
    public var lastModified: String?
    /// Nil until hashed.
    public var sha256: String?
    /// The full path.
    public var file: String?
    public var bytes: Int
    public var downloaded: Date?
    public var status: Status

    /// The day, numbered when `taken` has it already.
    static func name(seen date: Date, taken: Set<String>) -> String {
        let day = UTCDate.day(date)
        let base = "\(day.year)-\(day.month)-\(day.day)"
        var name = base
        var number = 2
        while taken.contains(name) {
            name = "\(base)-\(number)"
            number += 1
        }
        return name
    }
}

/// `episode_versions`, one row per earlier version: its columns, read into an ``EpisodeVersion``.
/// The statements that ask it beside `episodes` are `EpisodeRecord`'s.
extension EpisodeVersion {
    enum Column: Int, TableColumn {
        case id, episodeID, version, seen, url, length, finalURL, etag, lastModified, sha256, fileName, bytes, status, downloaded
    }

    static let all = Columns<Column>.all

    init(_ row: TableRow<Column>) {
        self.init(episodeID: row.int(.episodeID), name: row.text(.version), seen: row.date(.seen), url: row.text(.url),
                  length: row.optionalInt(.length), finalURL: row.text(.finalURL), etag: row.text(.etag), lastModified: row.text(.lastModified),
                  sha256: row.text(.sha256), file: row.text(.fileName), bytes: row.int(.bytes), downloaded: row.date(.downloaded),
                  status: row.text(.status).flatMap(Status.init(rawValue:)) ?? .kept)
    }

    /// The enclosure of the newest earlier version whose file is at `path`.
    static func url(ofFile path: String, in database: Database) throws -> String? {
        try database.scalarText("SELECT url FROM episode_versions WHERE file_name = ? AND url IS NOT NULL ORDER BY id DESC LIMIT 1", path)
    }

    /// An earlier version whose file is deleted (or gone) and no manifest lists: `replaced`.
    static func markReplaced(_ id: Int, in database: Database) throws {
        try database.run("UPDATE episode_versions SET status = 'replaced' WHERE id = ?", id)
    }
}
