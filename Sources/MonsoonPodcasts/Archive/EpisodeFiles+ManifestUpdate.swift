import FoundationEssentials
import MonsoonEngine

extension EpisodeFiles {
    /// What bringing manifests up to date did.
    public struct ManifestUpdate: Sendable, Equatable {
        /// The folders whose manifest now lists the episodes downloaded into them.
        public var folders: [String] = []
        /// Folders whose manifest could not be updated, each with why and what to do.
        public var failures: [String] = []
    }

    /// Adds the episodes downloaded into an archive folder by `sync` or `download` to its manifest, so `verify` does not
    /// call them extra. A file not hashed yet is one no manifest lists (writing a manifest keeps the hash of each file it lists); only
    /// a folder that holds a manifest already is an archive's. The manifest is merged into, never replaced, and one that
    /// is a symbolic link or cannot be read is left as it is, with the reason.
    public func addDownloadsToManifests() throws -> ManifestUpdate {
        var targets: [String: Int] = [:]
        for episode in try EpisodeRecord.unhashedDownloads(in: database) {
            if let path = episode.fileName, Self.isSafe(path), let folder = Manifest.folder(listing: path) { targets[folder] = episode.podcastID }
        }
        var update = ManifestUpdate()
        for (folder, podcast) in targets.sorted(by: { $0.key < $1.key }) {
            let path = folder.joiningPath(Manifest.fileName)
            if LocalFile.isLink(path) {
                update.failures.append("\(path) is a symbolic link, and Monsoon never writes through one: replace it with the file, then run 'monsoon archive' for that podcast")
                continue
            }
            let earlier: Manifest
            do { earlier = try Manifest.read(in: folder) } catch {
                update.failures.append("\(path) cannot be read as a Monsoon manifest, so it was left as it is: move it away, then run 'monsoon archive' for that podcast")
                continue
            }
            do {
                try manifest(podcast: podcast, folder: folder, extras: []).merged(over: earlier, in: folder).write(in: folder)
                update.folders.append(folder)
            } catch {
                update.failures.append("cannot update \(path): \(error)")
            }
        }
        return update
    }
}
