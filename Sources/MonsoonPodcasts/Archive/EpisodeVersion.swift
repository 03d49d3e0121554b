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

extension EpisodeQueue {
    /// Makes each episode a new version to download: its downloaded file becomes an earlier
    /// version (kept where it is, with its enclosure, validators and SHA-256), and the episode is
    /// again one to download, named with the day it was seen (`{version}`). The engine forgets the
    /// finished download first: a failure in between leaves the episode as it was, found again
    /// by the next run.
    public func startNewVersions(_ ids: [Int], seen: Date = Date()) throws {
        guard !ids.isEmpty else { return }
        // Hashed before, outside the transaction: the earlier version keeps what its bytes were.
        var hashes: [Int: String] = [:]
        for id in ids {
            guard let row = try database.statement("SELECT file_name, sha256 FROM episodes WHERE id = ? AND download_state = 'downloaded'")
                    .first([id], { ($0.text(0), $0.text(1)) }), row.1 == nil, let path = row.0, EpisodeFiles.size(of: path) != nil else { continue }
            hashes[id] = try EpisodeFiles.sha256(ofFile: path)
        }
        _ = try downloads.forget(ids.map(Self.downloadID(ofEpisode:)), ifIn: [.completed])
        try database.write {
            for id in ids {
                let taken = try database.statement("""
                    SELECT version FROM episode_versions WHERE episode_id = ?1 AND version IS NOT NULL
                    UNION SELECT version FROM episodes WHERE id = ?1 AND version IS NOT NULL
                    """).query([id]) { $0.text(0) ?? "" }
                try database.run("""
                    INSERT INTO episode_versions (episode_id, version, seen, url, length, final_url, etag, last_modified, sha256, file_name, bytes, downloaded)
                    SELECT id, version, coalesce(version_seen, archived_at), file_url, file_length, final_url, etag, last_modified, coalesce(sha256, ?2),
                        file_name, bytes_on_disk, archived_at
                    FROM episodes WHERE id = ?1 AND download_state = 'downloaded'
                    """, id, hashes[id])
                guard database.changes == 1 else { continue }
                try database.run("""
                    UPDATE episodes SET version = ?2, version_seen = ?3, download_state = 'none', download_error = NULL, file_name = NULL,
                        bytes_on_disk = 0, archived_at = NULL, sha256 = NULL, final_url = NULL, etag = NULL, last_modified = NULL,
                        file_url = NULL, file_length = NULL, queue_position = NULL
                    WHERE id = ?1
                    """, id, EpisodeVersion.name(seen: seen, taken: Set(taken)), seen)
            }
        }
    }
}

extension EpisodeFiles {
    /// What replacing earlier versions did (`--versions latest`).
    public struct Replacement: Sendable, Equatable {
        /// The files deleted.
        public var deleted: [String] = []
        /// Earlier versions left as they were, each with why.
        public var warnings: [String] = []
        /// Nothing done yet.
        public init() {}
    }

    /// Deletes the files of `podcast`'s earlier versions whose episode's newest version is
    /// downloaded and on disk: only then, so a new version that failed never costs the one
    /// before. Only files under `root` are deleted, never through a symbolic link; each goes
    /// from its folder's manifest. The versions stay listed, as `replaced`.
    public func replaceEarlierVersions(podcast: Int, root: String) throws -> Replacement {
        let rows = try database.statement("""
            SELECT v.id, v.file_name, e.file_name FROM episode_versions v JOIN episodes e ON e.id = v.episode_id
            WHERE e.podcast_id = ? AND v.status = 'kept' AND e.download_state = 'downloaded' AND e.file_name IS NOT NULL
            ORDER BY v.id
            """).query([podcast]) { (id: $0.int(0), old: $0.text(1), current: $0.text(2) ?? "") }
        var replacement = Replacement()
        let prefix = root.hasSuffix("/") ? root : root + "/"
        for row in rows where Self.size(of: row.current) != nil && row.old != row.current {
            if let old = row.old, Self.size(of: old) != nil {
                guard Self.isSafe(old), old.hasPrefix(prefix) else {
                    replacement.warnings.append("\(old) is an earlier version outside \(root): left alone")
                    continue
                }
                if let link = LocalFile.firstLink(below: root, in: (old as NSString).deletingLastPathComponent) {
                    replacement.warnings.append("\(link) is a symbolic link, and Monsoon never deletes through one: \(old) left alone")
                    continue
                }
                guard unlink(old) == 0 || errno == ENOENT else {
                    replacement.warnings.append("cannot delete the earlier version \(old): \(String(cString: strerror(errno)))")
                    continue
                }
                replacement.deleted.append(old)
                do { try Manifest.forget(fileAt: old) } catch {
                    replacement.warnings.append("\(old) was deleted, but the manifest in its folder could not be updated: \(error)")
                }
            }
            try database.run("UPDATE episode_versions SET status = 'replaced' WHERE id = ?", row.id)
        }
        return replacement
    }

    /// `podcast`'s earlier versions whose file is kept, for its manifest.
    func keptVersions(podcast: Int) throws -> [(guid: String?, title: String?, version: EpisodeVersion)] {
        try database.statement("""
            SELECT e.guid, e.title, \(EpisodeVersion.columns)
            FROM episode_versions v JOIN episodes e ON e.id = v.episode_id
            WHERE e.podcast_id = ? AND v.status = 'kept' AND v.file_name IS NOT NULL
            ORDER BY e.published IS NULL, e.published, e.id, v.id
            """).query([podcast]) { (guid: $0.text(0), title: $0.text(1), version: EpisodeVersion($0, from: 2)) }
    }
}

extension PodcastLibrary {
    /// Every version of `podcast`'s episodes that has any, by episode, oldest first: the earlier
    /// ones, then the newest (the episode's own file) once it is downloaded or is a later version.
    public func versions(ofPodcast podcast: Int) throws -> [Int: [EpisodeVersion]] {
        var versions: [Int: [EpisodeVersion]] = [:]
        let earlier = try database.statement("""
            SELECT \(EpisodeVersion.columns) FROM episode_versions v JOIN episodes e ON e.id = v.episode_id
            WHERE e.podcast_id = ? ORDER BY v.id
            """).query([podcast]) { EpisodeVersion($0, from: 0) }
        for version in earlier { versions[version.episodeID, default: []].append(version) }
        let current = try database.statement("""
            SELECT id, version, coalesce(version_seen, archived_at), coalesce(file_url, enclosure_url), coalesce(file_length, declared_length),
                final_url, etag, last_modified, sha256, file_name, bytes_on_disk, download_state = 'downloaded', archived_at
            FROM episodes WHERE podcast_id = ? AND (version IS NOT NULL OR download_state = 'downloaded')
            """).query([podcast]) { row in
            EpisodeVersion(episodeID: row.int(0), name: row.text(1), seen: row.date(2), url: row.text(3), length: row.optionalInt(4), finalURL: row.text(5),
                           etag: row.text(6), lastModified: row.text(7), sha256: row.text(8), file: row.text(9), bytes: row.int(10),
                           downloaded: row.date(12), status: row.bool(11) ? .current : .pending)
        }
        for version in current { versions[version.episodeID, default: []].append(version) }
        return versions
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
