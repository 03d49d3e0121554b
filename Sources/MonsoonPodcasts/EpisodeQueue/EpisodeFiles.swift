import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonStore

/// The files of downloaded episodes: what they take on disk, and deleting them (by hand, once played, or beyond a
/// podcast's newest N).
///
/// - Important: like its database connection, used from one task at a time.
public final class EpisodeFiles {
    let database: Database
    /// The engine's queue, asked through its interface only: it may live in another database.
    let downloads: any DownloadStateReading & QueueHousekeeping

    /// With the engine's queue in the same SQLite file.
    public convenience init(database: Database) throws {
        try self.init(database: database, downloads: try DownloadStore(database: database))
    }

    package init(database: Database, downloads: any DownloadStateReading & QueueHousekeeping) throws {
        self.database = database
        self.downloads = downloads
        try LibrarySchema.migrator.migrate(database)
    }

    /// A downloaded episode's file as it is on disk now.
    public struct Entry: Sendable, Equatable {
        public var episodeID: Int
        public var podcastID: Int
        /// The podcast's title (its feed URL when it has none).
        public var podcastTitle: String
        public var title: String?
        /// The full path, as the engine saved it.
        public var path: String
        /// From the file itself; nil when the file is missing.
        public var bytes: Int?
    }

    /// Every downloaded episode with its file, by podcast, newest first.
    public func entries() throws -> [Entry] {
        let names = try PodcastRecord.names(in: database)
        return try EpisodeRecord.downloadedFiles(in: database).map { episode in
            let path = episode.fileName ?? ""
            return Entry(episodeID: episode.id, podcastID: episode.podcastID, podcastTitle: names[episode.podcastID] ?? "", title: episode.title,
                         path: path, bytes: Self.size(of: path))
        }
    }

    /// What `delete` did.
    public struct Deletion: Sendable {
        /// Episodes reset to not downloaded.
        public var episodes: [Int] = []
        public var bytes = 0
        /// Episodes left alone: not downloaded (maybe still downloading), with why.
        public var skipped: [(Int, String)] = []
        /// Deleted, but the manifest of their archive folder could not be updated, with why.
        public var warnings: [String] = []

        public init() {}
    }

    /// Deletes the files of downloaded episodes and resets them to not downloaded; the engine forgets their finished
    /// downloads. A file already gone is no error; one whose size is not the one downloaded is another's now and is
    /// left alone. Files go one after the other, then the engine's queue and the episodes once for all: a failure
    /// midway leaves those before it done and the rest as they were (the one that failed may stay "downloaded" with
    /// its file gone, which `storage` names missing).
    /// - Throws: `LibraryError.notFound` for an id no episode has (then nothing is changed).
    public func delete(_ ids: [Int]) throws -> Deletion {
        let found = try ids.map { try EpisodeRecord.get($0, in: database).episode }
        // The roots of their downloads, in one query: a folder below one that became a link is not followed.
        let roots = try downloads.states(of: found.map { EpisodeQueue.downloadID(ofEpisode: $0.id) })
            .reduce(into: [DownloadID: String]()) { roots, state in roots[state.id] = state.root }
        var deletion = Deletion()
        do {
            try deleteFiles(found, roots: roots, into: &deletion)
        } catch {
            try Self.forgetFiles(of: deletion.episodes, downloads: downloads, database: database)
            throw error
        }
        try Self.forgetFiles(of: deletion.episodes, downloads: downloads, database: database)
        return deletion
    }

    private func deleteFiles(_ found: [Episode], roots: [DownloadID: String], into deletion: inout Deletion) throws {
        for episode in found {
            let (id, path, downloaded) = (episode.id, episode.fileName, episode.bytesOnDisk)
            guard episode.downloadState == .downloaded else {
                let state = episode.downloadState
                deletion.skipped.append((id, state == .none ? "not downloaded" : "\(state.rawValue), not downloaded yet; take it out of the queue with 'monsoon queue remove \(id)'"))
                continue
            }
            if let path, Self.isSafe(path) {
                // A folder of the archive that became a link leads elsewhere: nothing there is ours to delete.
                if let root = roots[EpisodeQueue.downloadID(ofEpisode: id)],
                   let link = LocalFile.firstLink(below: root, in: path.parentPath) {
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

    /// Resets episodes whose files are gone to not downloaded, after the engine's queue forgot their downloads: in that
    /// order, so a failure in between leaves an episode "downloaded" with its file missing (which `storage` shows),
    /// never one the next reconcile would mark downloaded again from a download still in the queue.
    static func forgetFiles(of ids: [Int], downloads: any QueueHousekeeping, database: Database) throws {
        guard !ids.isEmpty else { return }
        _ = try downloads.forget(ids.map(EpisodeQueue.downloadID(ofEpisode:)), ifIn: [.completed])
        try database.write {
            for id in ids { try EpisodeRecord.forgetFile(of: id, in: database) }
        }
    }

    /// Marks episodes played or not; a played one's saved position goes back to the start.
    /// - Throws: `LibraryError.notFound` for an id no episode has (nothing is changed).
    public func setPlayed(_ ids: [Int], _ played: Bool) throws {
        try database.write {
            for id in ids where try !EpisodeRecord.setPlayed(played, of: id, in: database) {
                throw EpisodeRecord.missing(id)
            }
        }
    }

    public func downloadedAndPlayed(podcast: Int? = nil) throws -> [Int] {
        try EpisodeRecord.downloadedAndPlayed(podcast: podcast, in: database)
    }

    public func downloaded(podcast: Int) throws -> [Int] {
        try EpisodeRecord.downloaded(podcast: podcast, in: database)
    }

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
    /// Applies the settings that delete downloads by themselves: `auto-delete-played` and, unless told not to,
    /// `keep-latest` (past a podcast's newest N, by publish date, its own value first).
    /// - Parameter podcast: only this podcast; nil for all.
    public func applyRetention(_ settings: Settings, podcast: Int? = nil, keepLatest: Bool = true) throws -> Deletion {
        var doomed: [Int] = []
        if try settings.autoDeletePlayed() { doomed += try downloadedAndPlayed(podcast: podcast) }
        let podcasts = keepLatest ? try podcast.map { [$0] } ?? EpisodeRecord.podcastsWithDownloads(in: database) : []
        for id in podcasts {
            if let keep = try settings.keepLatest(podcast: id) { doomed += try EpisodeRecord.beyondNewest(keep, podcast: id, in: database) }
        }
        var seen = Set<Int>()
        return try delete(doomed.filter { seen.insert($0).inserted })
    }

    public func podcast(ofEpisode id: Int) throws -> Int? {
        try EpisodeRecord.find(id, in: database)?.episode.podcastID
    }
}
