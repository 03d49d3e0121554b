import Foundation
import MonsoonEngine
import MonsoonStore

/// The files of downloaded episodes: what they take on disk, and deleting them (by hand,
/// once played, or beyond a podcast's newest N).
///
/// - Important: like its database connection, used from one task at a time.
public final class EpisodeFiles {
    let database: Database
    /// The engine's queue, asked through its interface only: it may live in another database.
    let downloads: any DownloadStateReading & QueueHousekeeping

    /// Opens the episode files of the library in `database`, creating the library's and the
    /// queue's tables when missing (the engine's queue in the same SQLite file).
    public convenience init(database: Database) throws {
        try self.init(database: database, downloads: try DownloadStore(database: database))
    }

    /// Opens the episode files of the library in `database`, with the engine's queue in `downloads`.
    package init(database: Database, downloads: any DownloadStateReading & QueueHousekeeping) throws {
        self.database = database
        self.downloads = downloads
        try LibrarySchema.migrator.migrate(database)
    }

    /// A downloaded episode's file as it is on disk now.
    public struct Entry: Sendable, Equatable {
        /// The episode's id.
        public var episodeID: Int
        /// The podcast it belongs to.
        public var podcastID: Int
        /// The podcast's title (its feed URL when it has none).
        public var podcastTitle: String
        /// The episode's title, if it has one.
        public var title: String?
        /// The file's full path, as the engine saved it.
        public var path: String
        /// The file's size, from the file itself; nil when the file is missing.
        public var bytes: Int?
    }

    /// Every downloaded episode with its file, by podcast, newest first.
    public func entries() throws -> [Entry] {
        try database.statement("""
            SELECT e.id, e.podcast_id, p.title, e.title, e.file_name, p.feed_url
            FROM episodes e JOIN podcasts p ON p.id = e.podcast_id
            WHERE e.download_state = 'downloaded' AND e.file_name IS NOT NULL
            ORDER BY e.podcast_id, e.published IS NULL, e.published DESC, e.id DESC
            """).query { row in
            let path = row.text(4) ?? ""
            return Entry(episodeID: row.int(0), podcastID: row.int(1), podcastTitle: FallbackName.podcast(title: row.text(2), feedURL: row.text(5)), title: row.text(3),
                         path: path, bytes: Self.size(of: path))
        }
    }

    /// What `delete` did.
    public struct Deletion: Sendable {
        /// Episodes reset to not downloaded.
        public var episodes: [Int] = []
        /// Bytes of the files removed.
        public var bytes = 0
        /// Episodes left alone: not downloaded (maybe still downloading), with why.
        public var skipped: [(Int, String)] = []
        /// Deleted, but the manifest of their archive folder could not be updated, with why.
        public var warnings: [String] = []

        /// Nothing deleted yet.
        public init() {}
    }

    /// Deletes the files of downloaded episodes and resets them to not downloaded; the
    /// engine forgets their finished downloads. A file that is already gone is no error; a
    /// file whose size is not the one downloaded is not the episode's any more (another
    /// took its name) and is left alone. Episodes are done one after the other, file first:
    /// a failure midway leaves those before it done and the rest as they were (the one that
    /// failed may be left "downloaded" with its file gone: `storage` names it missing). The
    /// engine's queue and the episodes are then updated once for all of them, in that order.
    /// - Throws: `LibraryError.notFound` for an id no episode has (then nothing is changed).
    public func delete(_ ids: [Int]) throws -> Deletion {
        var found: [(id: Int, state: String?, path: String?, bytes: Int)] = []
        for id in ids {
            guard let row = try database.statement("SELECT download_state, file_name, bytes_on_disk FROM episodes WHERE id = ?").first([id], {
                ($0.text(0), $0.text(1), $0.int(2))
            }) else {
                throw LibraryError.notFound("no episode has id \(id); list them with 'monsoon episodes PODCAST'")
            }
            found.append((id, row.0, row.1, row.2))
        }
        // The roots of their downloads, in one query: a folder below one that became a link is not followed.
        let roots = try downloads.states(of: found.map { EpisodeQueue.downloadID(ofEpisode: $0.id) })
            .reduce(into: [DownloadID: String]()) { roots, state in roots[state.id] = state.root }
        var deletion = Deletion()
        do {
            try deleteFiles(found, roots: roots, into: &deletion)
        } catch {
            try reset(deletion.episodes)
            throw error
        }
        try reset(deletion.episodes)
        return deletion
    }

    private func deleteFiles(_ found: [(id: Int, state: String?, path: String?, bytes: Int)], roots: [DownloadID: String],
                             into deletion: inout Deletion) throws {
        for (id, state, path, downloaded) in found {
            guard state == EpisodeDownloadState.downloaded.rawValue else {
                deletion.skipped.append((id, state == "none" ? "not downloaded" : "\(state ?? "none"), not downloaded yet; take it out of the queue with 'monsoon queue remove \(id)'"))
                continue
            }
            if let path, Self.isSafe(path) {
                // A folder of the archive that became a link leads elsewhere: nothing there is ours to delete.
                if let root = roots[EpisodeQueue.downloadID(ofEpisode: id)],
                   let link = LocalFile.firstLink(below: root, in: (path as NSString).deletingLastPathComponent) {
                    deletion.skipped.append((id, "\(link) is a symbolic link, and Monsoon never deletes through one: \(path) left alone"))
                    continue
                }
                let size = Self.size(of: path) ?? 0
                if size != 0 && downloaded > 0 && size != downloaded {
                    deletion.skipped.append((id, "the file \(path) is not the one downloaded (\(size) bytes, not \(downloaded)): left alone"))
                    continue
                }
                if unlink(path) == 0 { deletion.bytes += size } else if errno != ENOENT {
                    throw EpisodeFileError(.fileSystem, "cannot delete \(path): \(String(cString: strerror(errno)))")
                }
                // Deleted on purpose: an archive's manifest no longer lists it (else `verify` would call it missing).
                do { try Manifest.forget(fileAt: path) } catch {
                    deletion.warnings.append("\(path) was deleted, but the manifest in its folder could not be updated: \(error)")
                }
                // Its `--write-info-json` sidecar goes with it (a link there is not ours: left alone).
                if let warning = InfoSidecar.delete(besideFile: path) { deletion.warnings.append(warning) }
            }
            deletion.episodes.append(id)
        }
    }

    /// Resets episodes whose files are gone to not downloaded, after the engine's queue has
    /// forgotten their finished downloads: in that order, so a failure in between leaves an
    /// episode "downloaded" with its file missing (which `storage` shows), never one that the
    /// next reconcile would mark downloaded again from a download still in the queue.
    private func reset(_ ids: [Int]) throws {
        guard !ids.isEmpty else { return }
        _ = try downloads.forget(ids.map(EpisodeQueue.downloadID(ofEpisode:)), ifIn: [.completed])
        try database.write {
            for id in ids {
                try database.run("UPDATE episodes SET download_state = 'none', file_name = NULL, bytes_on_disk = 0, download_error = NULL WHERE id = ?", id)
            }
        }
    }

    /// Marks episodes played or not; a played one's saved position goes back to the start.
    /// - Throws: `LibraryError.notFound` for an id no episode has (nothing is changed).
    public func setPlayed(_ ids: [Int], _ played: Bool) throws {
        try database.write {
            for id in ids {
                try database.run("UPDATE episodes SET played = ?, position = CASE WHEN ? THEN 0 ELSE position END WHERE id = ?", played, played, id)
                if database.changes == 0 { throw LibraryError.notFound("no episode has id \(id); list them with 'monsoon episodes PODCAST'") }
            }
        }
    }

    /// The downloaded episodes that are played.
    public func downloadedAndPlayed(podcast: Int? = nil) throws -> [Int] {
        try database.statement("""
            SELECT id FROM episodes WHERE download_state = 'downloaded' AND played = 1 AND (?1 IS NULL OR podcast_id = ?1) ORDER BY id
            """).query([podcast]) { $0.int(0) }
    }

    /// The downloaded episodes of a podcast.
    public func downloaded(podcast: Int) throws -> [Int] {
        try database.statement("SELECT id FROM episodes WHERE download_state = 'downloaded' AND podcast_id = ? ORDER BY id").query([podcast]) { $0.int(0) }
    }

    /// The downloaded episodes of `podcast` past its newest `keep` (by publish date, then id).
    public func beyondNewest(_ keep: Int, podcast: Int) throws -> [Int] {
        try database.statement("""
            SELECT id FROM episodes WHERE download_state = 'downloaded' AND podcast_id = ?
            ORDER BY published IS NULL, published DESC, id DESC LIMIT -1 OFFSET ?
            """).query([podcast, max(0, keep)]) { $0.int(0) }
    }

    /// The podcasts with downloaded episodes.
    public func podcastsWithDownloads() throws -> [Int] {
        try database.statement("SELECT DISTINCT podcast_id FROM episodes WHERE download_state = 'downloaded' ORDER BY podcast_id").query { $0.int(0) }
    }

    /// The hex SHA-256 of a file, with a file error of the library's kind.
    static func sha256(ofFile path: String) throws -> String {
        do {
            return try FileDigest.sha256(ofFile: path)
        } catch {
            throw EpisodeFileError(.fileSystem, error.message)
        }
    }

    static func size(of path: String) -> Int? { LocalFile.size(at: path) }

    /// Only an absolute path of our own making is ever deleted: no `..`, no NUL.
    static func isSafe(_ path: String) -> Bool {
        path.hasPrefix("/") && !path.split(separator: "/").contains("..") && !path.contains("\0")
    }
}

extension EpisodeFiles {
    /// Applies the settings that delete downloads by themselves: `auto-delete-played`
    /// (played episodes) and, unless told not to, `keep-latest` (past a podcast's newest N,
    /// its own value first).
    /// - Parameter podcast: only this podcast; nil for all.
    public func applyRetention(_ settings: Settings, podcast: Int? = nil, keepLatest: Bool = true) throws -> Deletion {
        var doomed: [Int] = []
        if try settings.autoDeletePlayed() { doomed += try downloadedAndPlayed(podcast: podcast) }
        let podcasts = keepLatest ? try podcast.map { [$0] } ?? podcastsWithDownloads() : []
        for id in podcasts {
            if let keep = try settings.keepLatest(podcast: id) { doomed += try beyondNewest(keep, podcast: id) }
        }
        var seen = Set<Int>()
        return try delete(doomed.filter { seen.insert($0).inserted })
    }

    /// The podcast an episode belongs to.
    public func podcast(ofEpisode id: Int) throws -> Int? {
        try database.scalarInt("SELECT podcast_id FROM episodes WHERE id = ?", id)
    }
}
