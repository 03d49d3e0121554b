import FoundationEssentials
import Glibc
import MonsoonEngine

/// `monsoon verify`: re-hashes an archive's files against their manifests.
public enum ArchiveVerifier {
    /// Files are named by their path under the directory `verify` was given.
    public struct Report: Sendable, Equatable {
        public var folders: [String] = []
        /// Manifest entries.
        public var checked = 0
        /// Listed, but not there.
        public var missing: [String] = []
        /// There, but another size or SHA-256 than listed.
        public var changed: [String] = []
        /// There, but listed in no manifest (part files of unfinished downloads aside).
        public var extra: [String] = []
        /// Never read through: a link to a file elsewhere would pass for the file.
        public var links: [String] = []
        /// Manifests that cannot be read (damaged, or not Monsoon's): their folders' files are not checked, the others' are.
        public var unreadable: [Unreadable] = []
        /// Podcast folders without the copy of their feed (`feed.xml`), which their manifest does not list either.
        public var withoutFeed: [String] = []
        /// Episodes of the podcasts whose archive this is that the library downloaded elsewhere (full paths): said, but
        /// not a fault of the archive, so `isClean` leaves them out; they were downloaded before it was their folder.
        public var outside: [String] = []

        public struct Unreadable: Sendable, Equatable {
            public var path: String
            public var reason: String
        }

        public init() {}

        public var isClean: Bool { missing.isEmpty && changed.isEmpty && extra.isEmpty && links.isEmpty && unreadable.isEmpty && withoutFeed.isEmpty }
    }

    /// `directory`: one podcast's folder (it holds a manifest), or an archive root (its folders, at any depth, that do).
    /// - Throws: `EpisodeFileError` when there is no manifest to check.
    public static func verify(_ directory: String) throws -> Report {
        var report = Report()
        let folders = manifestFolders(in: directory)
        guard !folders.isEmpty else {
            throw EpisodeFileError(.notAnArchive, "no \(Manifest.fileName) in \(directory) or its folders: it is not a Monsoon archive; make one with 'monsoon archive FEED_URL -o \(directory)'")
        }
        let root = directory.standardizedPath
        report.links = links(under: root)
        for folder in folders {
            // A manifest that is a link is another file's: reported (with the links), not read.
            if LocalFile.firstLink(below: root, in: folder.joiningPath(Manifest.fileName)) != nil { continue }
            let manifest: Manifest
            do {
                manifest = try Manifest.read(in: folder)
            } catch let error as EpisodeFileError {
                report.unreadable.append(Report.Unreadable(path: folder.joiningPath(Manifest.fileName), reason: error.message))
                continue
            }
            report.folders.append(folder)
            // A cluster's workers keep no copy of the feed: the shared library has it.
            if !manifest.files.contains(where: { $0.kind == "feed" || $0.worker != nil }) && !FileManager.default.fileExists(atPath: folder.joiningPath("feed.xml")) {
                report.withoutFeed.append(folder.joiningPath("feed.xml"))
            }
            var listed = Set<String>()
            for entry in manifest.files {
                let path = folder.joiningPath(entry.file)
                listed.insert(entry.file)
                report.checked += 1
                // Through a link, the bytes read would be another file's: reported, not read.
                if let link = LocalFile.firstLink(below: root, in: path) {
                    if !report.links.contains(link) { report.links.append(link) }
                    continue
                }
                guard let size = EpisodeFiles.size(of: path) else {
                    report.missing.append(path)
                    continue
                }
                if try size != entry.size || EpisodeFiles.sha256(ofFile: path) != entry.sha256 { report.changed.append(path) }
            }
            for file in files(under: folder) where !listed.contains(file) && file != Manifest.fileName && !file.hasSuffix(".part") {
                // A nested podcast folder's own files are its manifest's business.
                if folders.contains(where: { $0 != folder && folder.joiningPath(file).hasPrefix($0 + "/") }) { continue }
                report.extra.append(folder.joiningPath(file))
            }
        }
        return report
    }

    /// The files of episodes the library downloaded outside `root` whose podcasts' archive folder (the setting `folder`,
    /// in `folders`) `root` is, or holds as that podcast's folder: by `sync` or `download` before it was, or before it
    /// changed. The archive lacks them.
    public static func downloadedOutside(_ root: String, folders: [Int: String], queue: EpisodeQueue) throws -> [String] {
        let root = root.standardizedPath
        var podcasts = Set(folders.filter { $0.value.standardizedPath == root }.keys)
        let inside = folders.filter { root.hasPrefix($0.value.standardizedPath + "/") }
        // One podcast's folder inside its archive: its manifest says which. One that cannot be read names none here
        // (the report lists it as unreadable).
        if podcasts.isEmpty, !inside.isEmpty, let feed = try? Manifest.read(in: root).feedURL {
            podcasts = Set(try PodcastLibrary.podcasts(readingOnly: queue.database).filter { inside[$0.id] != nil && $0.feedURL.absoluteString == feed }.map(\.id))
        }
        guard !podcasts.isEmpty else { return [] }
        return try EpisodeRecord.downloadedFiles(in: queue.database).filter { podcasts.contains($0.podcastID) }.compactMap(\.fileName)
            .filter { !$0.hasPrefix(root + "/") }.sorted()
    }

    /// `directory` itself when it holds a manifest, else every folder below it that does.
    static func manifestFolders(in directory: String) -> [String] {
        let path = directory.standardizedPath
        if FileManager.default.fileExists(atPath: path.joiningPath(Manifest.fileName)) { return [path] }
        return files(under: path).filter { $0.fileName == Manifest.fileName }
            .map { path.joiningPath($0.parentPath) }.sorted()
    }

    /// Full paths, none followed.
    static func links(under folder: String) -> [String] {
        var found: [String] = []
        FileTree.walk(folder) { name, kind in
            if kind == .link { found.append(folder.joiningPath(name)) }
            return true
        }
        return found.sorted()
    }

    /// Relative to `folder`, symbolic links not followed.
    static func files(under folder: String) -> [String] {
        var found: [String] = []
        FileTree.walk(folder) { name, kind in
            if kind == .file { found.append(name) }
            return true
        }
        return found.sorted()
    }
}
