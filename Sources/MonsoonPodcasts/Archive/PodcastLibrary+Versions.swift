import Foundation
import MonsoonEngine
import MonsoonStore

/// What looking for new versions of a podcast's archived episodes found.
public struct VersionScan: Sendable, Equatable {
    /// A new version of an archived episode, to download beside the archived file.
    public struct Found: Sendable, Equatable {
        /// The episode.
        public var episodeID: Int
        /// Its title (its identity when it has none), for messages.
        public var title: String
        /// Why it is a new version.
        public var reason: String
    }

    /// Episodes whose listed enclosure is a new version.
    public var found: [Found] = []
    /// Episodes the server could not tell about this time (asked again next run), each a message.
    public var unknown: [String] = []

    /// Nothing found yet.
    public init() {}
}

extension PodcastLibrary {
    /// At most this many servers are asked at once about changed enclosures.
    static let versionProbes = 6

    /// Looks for new versions of `podcast`'s downloaded episodes, after a refresh (see
    /// ``VersionCheck``): only an episode whose listed enclosure differs from the one its file
    /// came from (URL or declared length) is looked at, so a rerun over an unchanged catalogue
    /// is one query and no request. An enclosure found to hold the archived file is recorded as
    /// the file's, and not asked about again.
    ///
    /// - Parameter among: only these episodes (those the run's selection keeps); nil for all.
    public func scanVersions(podcast: Int, among: [Int]? = nil) async throws -> VersionScan {
        struct Row: Sendable {
            var id: Int
            var title: String
            var archived: VersionCheck.Archived
            var listed: VersionCheck.Listed
        }
        let rows = try await onDatabase {
            try database.statement("""
                SELECT id, coalesce(title, identity), file_url, file_length, bytes_on_disk, etag, last_modified, enclosure_url, declared_length, file_name
                FROM episodes
                WHERE podcast_id = ? AND download_state = 'downloaded' AND file_url IS NOT NULL AND enclosure_url IS NOT NULL
                    AND (enclosure_url IS NOT file_url OR declared_length IS NOT file_length)
                """).query([podcast]) { row in
                (Row(id: row.int(0), title: row.text(1) ?? "",
                     archived: .init(url: row.text(2) ?? "", length: row.optionalInt(3), fileSize: row.int(4), etag: row.text(5), lastModified: row.text(6)),
                     listed: .init(url: row.text(7) ?? "", length: row.optionalInt(8))), row.text(9))
            }
        }
        var scan = VersionScan()
        var same: [Row] = []
        var asking: [Row] = []
        let wanted = among.map(Set.init)
        // A file gone from disk is not compared: `--refetch-missing` is the way back for it.
        for (row, path) in rows where wanted?.contains(row.id) ?? true && path.map({ LocalFile.size(at: $0) != nil }) ?? false {
            switch VersionCheck.before(row.archived, listed: row.listed) {
            case .sameFile: same.append(row)
            case .ask: asking.append(row)
            default: continue
            }
        }
        let fetcher = self.fetcher
        for batch in stride(from: 0, to: asking.count, by: Self.versionProbes).map({ asking[$0..<min($0 + Self.versionProbes, asking.count)] }) {
            let answers = await withTaskGroup(of: (Row, Result<VersionCheck.Answer, FeedError>).self) { group in
                for row in batch {
                    group.addTask {
                        do throws(FeedError) { return (row, .success(try await fetcher.probe(row.listed.url))) } catch { return (row, .failure(error)) }
                    }
                }
                var answers: [(Row, Result<VersionCheck.Answer, FeedError>)] = []
                for await answer in group { answers.append(answer) }
                return answers.sorted { $0.0.id < $1.0.id }
            }
            try Task.checkCancellation()
            for (row, result) in answers {
                switch result {
                case .failure(let error):
                    scan.unknown.append("\(row.title): cannot check whether its new enclosure is a new version (\(error.message)); it is checked again on the next run")
                case .success(let answer):
                    switch VersionCheck.after(row.archived, answer: answer) {
                    case .newVersion(let reason): scan.found.append(.init(episodeID: row.id, title: row.title, reason: reason))
                    case .unknown(let reason):
                        scan.unknown.append("\(row.title): cannot check whether its new enclosure is a new version (\(reason)); it is checked again on the next run")
                    default: same.append(row)
                    }
                }
            }
        }
        try await onDatabase { [same] in
            try database.write {
                for row in same {
                    try database.run("UPDATE episodes SET file_url = ?, file_length = ? WHERE id = ?", row.listed.url, row.listed.length, row.id)
                }
            }
        }
        return scan
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
