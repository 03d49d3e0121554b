import FoundationEssentials
import MonsoonEngine
import MonsoonStore

/// What looking for new versions of a podcast's archived episodes found.
public struct VersionScan: Sendable, Equatable {
    /// To download beside the archived file.
    public struct Found: Sendable, Equatable {
        public var episodeID: Int
        /// Its identity when it has none.
        public var title: String
        public var reason: String
    }

    public var found: [Found] = []
    /// Episodes the server could not tell about this time (asked again next run).
    public var unknown: [String] = []
}

extension PodcastLibrary {
    /// At most this many servers are asked at once about changed enclosures.
    static let versionProbes = 6

    /// After a refresh (see ``VersionCheck``): only an episode whose listed enclosure differs from its file's (URL or
    /// declared length) is looked at, so a rerun over an unchanged catalogue is one query and no request. An enclosure
    /// found to hold the archived file is recorded as the file's, and not asked about again.
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
            try EpisodeRecord.ofPodcast(podcast, in: database).compactMap { record -> (Row, String?)? in
                let episode = record.episode
                guard record.isDownloaded, let file = record.fileURL, let listed = record.enclosure,
                      listed != file || episode.declaredLength != record.fileLength else { return nil }
                return (Row(id: record.id, title: episode.title ?? episode.identity,
                            archived: .init(url: file, length: record.fileLength, fileSize: episode.bytesOnDisk, etag: record.etag, lastModified: record.lastModified),
                            listed: .init(url: listed, length: episode.declaredLength)), episode.fileName)
            }.sorted { $0.0.id < $1.0.id }
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
                let verdict: VersionCheck.Verdict = switch result {
                case .failure(let error): .unknown(error.message)
                case .success(let answer): VersionCheck.after(row.archived, answer: answer)
                }
                switch verdict {
                case .newVersion(let reason): scan.found.append(.init(episodeID: row.id, title: row.title, reason: reason))
                case .unknown(let reason):
                    scan.unknown.append("\(row.title): cannot check whether its new enclosure is a new version (\(reason)); it is checked again on the next run")
                default: same.append(row)
                }
            }
        }
        try await onDatabase { [same] in
            try database.write {
                for row in same {
                    try EpisodeRecord.setFileEnclosure(url: row.listed.url, length: row.listed.length, of: row.id, in: database)
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
        for (_, version) in try EpisodeRecord.earlierVersions(ofPodcast: podcast, in: database) { versions[version.episodeID, default: []].append(version) }
        for record in try EpisodeRecord.ofPodcast(podcast, in: database) where record.version != nil || record.isDownloaded {
            let episode = record.episode
            versions[record.id, default: []].append(EpisodeVersion(
                episodeID: record.id, name: record.version, seen: record.versionSeen ?? record.archivedAt, url: record.fileURL ?? record.enclosure,
                length: record.fileLength ?? episode.declaredLength, finalURL: record.finalURL, etag: record.etag, lastModified: record.lastModified,
                sha256: record.sha256, file: episode.fileName, bytes: episode.bytesOnDisk, downloaded: record.archivedAt,
                status: record.isDownloaded ? .current : .pending))
        }
        return versions
    }
}
