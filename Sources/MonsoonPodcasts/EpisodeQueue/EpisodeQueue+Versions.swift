import FoundationEssentials
import MonsoonEngine
import MonsoonStore

extension EpisodeQueue {
    /// Makes each episode a new version to download: its file becomes an earlier version (kept where it is, with its
    /// enclosure, validators and SHA-256), and the episode is named with the day it was seen (`{version}`). The engine
    /// forgets the finished download first: a failure in between leaves the episode as it was, for the next run.
    ///
    /// - Returns: the episodes left as they were, each with why: one whose file cannot be read (it is hashed first, so
    ///   the earlier version keeps what its bytes were) stays for this run; the others go on.
    @discardableResult
    public func startNewVersions(_ ids: [Int], seen: Date = Date()) throws -> [Int: String] {
        // Hashed before, outside the transaction.
        var hashes: [Int: String] = [:]
        var skipped: [Int: String] = [:]
        for id in ids {
            guard let record = try EpisodeRecord.find(id, in: database), record.isDownloaded, record.sha256 == nil,
                  let path = record.episode.fileName, EpisodeFiles.size(of: path) != nil else { continue }
            do { hashes[id] = try EpisodeFiles.sha256(ofFile: path) } catch { skipped[id] = "\(error)" }
        }
        let ids = ids.filter { skipped[$0] == nil }
        guard !ids.isEmpty else { return skipped }
        _ = try downloads.forget(ids.map(Self.downloadID(ofEpisode:)), ifIn: [.completed])
        try database.write {
            for id in ids {
                let taken = Set(try EpisodeRecord.versionNames(of: id, in: database))
                _ = try EpisodeRecord.startNewVersion(of: id, sha256: hashes[id], name: EpisodeVersion.name(seen: seen, taken: taken), seen: seen, in: database)
            }
        }
        return skipped
    }
}
