import Foundation
import MonsoonEngine
import MonsoonStore

extension EpisodeQueue {
    /// Makes each episode a new version to download: its downloaded file becomes an earlier
    /// version (kept where it is, with its enclosure, validators and SHA-256), and the episode is
    /// again one to download, named with the day it was seen (`{version}`). The engine forgets the
    /// finished download first: a failure in between leaves the episode as it was, found again
    /// by the next run.
    ///
    /// - Returns: the episodes left as they were, each with why: one whose earlier file cannot be
    ///   read (it is hashed first, so the earlier version keeps what its bytes were) stays the
    ///   episode's file this run, and is found again by the next; the others go on.
    @discardableResult
    public func startNewVersions(_ ids: [Int], seen: Date = Date()) throws -> [Int: String] {
        // Hashed before, outside the transaction.
        var hashes: [Int: String] = [:]
        var skipped: [Int: String] = [:]
        for id in ids {
            guard let row = try database.statement("SELECT file_name, sha256 FROM episodes WHERE id = ? AND download_state = 'downloaded'")
                    .first([id], { ($0.text(0), $0.text(1)) }), row.1 == nil, let path = row.0, EpisodeFiles.size(of: path) != nil else { continue }
            do { hashes[id] = try EpisodeFiles.sha256(ofFile: path) } catch { skipped[id] = "\(error)" }
        }
        let ids = ids.filter { skipped[$0] == nil }
        guard !ids.isEmpty else { return skipped }
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
        return skipped
    }
}
