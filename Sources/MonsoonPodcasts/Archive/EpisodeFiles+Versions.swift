import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonStore

extension EpisodeFiles {
    /// What replacing earlier versions did (`--versions latest`).
    public struct Replacement: Sendable, Equatable {
        public var deleted: [String] = []
        /// Earlier versions left as they were, each with why.
        public var warnings: [String] = []
    }

    /// Deletes the files of earlier versions whose episode's newest version is downloaded and on disk, so a new version
    /// that failed never costs the one before. Only files under `root`, never through a link, and only a file still the
    /// one recorded: its size the version's, no episode or other kept version naming its path (else said and left
    /// alone). A version becomes `replaced` only once its manifest no longer lists it, also when its file was gone
    /// already; a manifest that cannot be updated leaves it `kept`, for the next run. Its sidecar goes too.
    public func replaceEarlierVersions(podcast: Int, root: String) throws -> Replacement {
        let files = Dictionary(uniqueKeysWithValues: try EpisodeRecord.ofPodcast(podcast, in: database).compactMap { record in
            record.isDownloaded ? record.episode.fileName.map { (record.id, $0) } : nil
        })
        let rows = try EpisodeRecord.earlierVersions(ofPodcast: podcast, in: database).compactMap { id, version in
            version.status == .kept ? files[version.episodeID].map { (id: id, old: version.file, current: $0, bytes: version.bytes) } : nil
        }
        var replacement = Replacement()
        let prefix = root.hasSuffix("/") ? root : root + "/"
        for row in rows where Self.size(of: row.current) != nil && row.old != row.current {
            if let old = row.old, let size = Self.size(of: old) {
                guard Self.isSafe(old), old.hasPrefix(prefix) else {
                    replacement.warnings.append("\(old) is an earlier version outside \(root): left alone")
                    continue
                }
                if let link = LocalFile.firstLink(below: root, in: old.parentPath) {
                    replacement.warnings.append("\(link) is a symbolic link, and Monsoon never deletes through one: \(old) left alone")
                    continue
                }
                guard size == row.bytes else {
                    replacement.warnings.append("\(old) is \(size) bytes, not the \(row.bytes) of the earlier version downloaded there, so it is "
                                                + "not that file any more: left alone (delete it yourself if you do not want it)")
                    continue
                }
                guard try !EpisodeRecord.namesFile(old, besidesVersion: row.id, in: database) else {
                    replacement.warnings.append("\(old) is now the file of another episode or version, so it is not deleted as an earlier version")
                    continue
                }
                guard unlink(old) == 0 || errno == ENOENT else {
                    replacement.warnings.append("cannot delete the earlier version \(old): \(String(cString: strerror(errno)))")
                    continue
                }
                replacement.deleted.append(old)
            }
            // Also when the file went already: under the root, never through a link.
            if let old = row.old, Self.isSafe(old), old.hasPrefix(prefix), LocalFile.firstLink(below: root, in: old.parentPath) == nil,
               let warning = InfoSidecar.delete(besideFile: old) {
                replacement.warnings.append(warning)
            }
            if let old = row.old {
                do { try Manifest.forget(fileAt: old) } catch {
                    replacement.warnings.append("the earlier version \(old) is gone, but the manifest in its folder could not be updated "
                                                + "(\(error)); the next archive with --versions latest tries again")
                    continue
                }
            }
            try EpisodeVersion.markReplaced(row.id, in: database)
        }
        return replacement
    }

    /// For the manifest.
    func keptVersions(podcast: Int) throws -> [(guid: String?, title: String?, version: EpisodeVersion)] {
        let kept = try EpisodeRecord.earlierVersions(ofPodcast: podcast, in: database).filter { $0.version.status == .kept && $0.version.file != nil }
        guard !kept.isEmpty else { return [] }   // most podcasts have none: their episodes are not read a second time
        let episodes = Dictionary(uniqueKeysWithValues: try EpisodeRecord.ofPodcast(podcast, in: database).map { ($0.id, $0) })
        // Oldest episode first (the manifest's order), each episode's versions in the order they were kept.
        return kept
            .compactMap { id, version in episodes[version.episodeID].map { (id, $0, version) } }
            .sorted { a, b in a.1.id == b.1.id ? a.0 < b.0 : EpisodeRecord.oldestFirst(a.1, b.1) }
            .map { (guid: $0.1.episode.guid, title: $0.1.episode.title, version: $0.2) }
    }
}
