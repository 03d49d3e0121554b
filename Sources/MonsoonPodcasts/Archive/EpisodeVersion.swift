import Foundation
import MonsoonEngine
import MonsoonStore

/// One version of an episode: a file downloaded from one enclosure, kept beside the later ones
/// when the feed republished the episode (see ``VersionCheck``).
public struct EpisodeVersion: Sendable, Equatable {
    /// What became of a version.
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

    /// The episode.
    public var episodeID: Int
    /// Its `{version}`: nil for the first, else the day it was seen (`2026-12-01`, `2026-12-01-2` for a second that day).
    public var name: String?
    /// When it was seen: for the first, when it was downloaded.
    public var seen: Date?
    /// The enclosure URL the feed listed for it.
    public var url: String?
    /// The length the feed declared.
    public var length: Int?
    /// Where its bytes came from after redirects.
    public var finalURL: String?
    /// The `ETag` the server sent with its bytes.
    public var etag: String?
    /// The `Last-Modified` the server sent with its bytes.
    public var lastModified: String?
    /// Its file's SHA-256 (nil until hashed).
    public var sha256: String?
    /// Its file's full path.
    public var file: String?
    /// Its size in bytes.
    public var bytes: Int
    /// When its file was downloaded.
    public var downloaded: Date?
    /// What became of it.
    public var status: Status

    /// `{version}` for a version seen at `date`: its day, numbered when `taken` has it already.
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

extension EpisodeVersion {
    /// The columns `init(_:from:)` reads, of `episode_versions v`.
    static let columns = "v.episode_id, v.version, v.seen, v.url, v.length, v.final_url, v.etag, v.last_modified, v.sha256, v.file_name, v.bytes, v.status, v.downloaded"

    init(_ row: Row, from start: Int32) {
        self.init(episodeID: row.int(start), name: row.text(start + 1), seen: row.date(start + 2), url: row.text(start + 3),
                  length: row.optionalInt(start + 4), finalURL: row.text(start + 5), etag: row.text(start + 6), lastModified: row.text(start + 7),
                  sha256: row.text(start + 8), file: row.text(start + 9), bytes: row.int(start + 10), downloaded: row.date(start + 12),
                  status: row.text(start + 11).flatMap(Status.init(rawValue:)) ?? .kept)
    }
}
