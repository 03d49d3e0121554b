import Foundation
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

        public struct Unreadable: Sendable, Equatable {
            public var path: String
            public var reason: String
        }

        public init() {}

        public var isClean: Bool { missing.isEmpty && changed.isEmpty && extra.isEmpty && links.isEmpty && unreadable.isEmpty }
    }

    /// `directory`: one podcast's folder (it holds a manifest), or an archive root (its folders, at any depth, that do).
    /// - Throws: `EpisodeFileError` when there is no manifest to check.
    public static func verify(_ directory: String) throws -> Report {
        var report = Report()
        let folders = manifestFolders(in: directory)
        guard !folders.isEmpty else {
            throw EpisodeFileError(.notAnArchive, "no \(Manifest.fileName) in \(directory) or its folders: it is not a Monsoon archive (make one with 'monsoon archive FEED_URL -o \(directory)')")
        }
        let root = (directory as NSString).standardizingPath
        report.links = links(under: root)
        for folder in folders {
            // A manifest that is a link is another file's: reported (with the links), not read.
            if LocalFile.firstLink(below: root, in: (folder as NSString).appendingPathComponent(Manifest.fileName)) != nil { continue }
            let manifest: Manifest
            do {
                manifest = try Manifest.read(in: folder)
            } catch let error as EpisodeFileError {
                report.unreadable.append(Report.Unreadable(path: (folder as NSString).appendingPathComponent(Manifest.fileName), reason: error.message))
                continue
            }
            report.folders.append(folder)
            var listed = Set<String>()
            for entry in manifest.files {
                let path = (folder as NSString).appendingPathComponent(entry.file)
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
                if folders.contains(where: { $0 != folder && ((folder as NSString).appendingPathComponent(file)).hasPrefix($0 + "/") }) { continue }
                report.extra.append((folder as NSString).appendingPathComponent(file))
            }
        }
        return report
    }

    /// `directory` itself when it holds a manifest, else every folder below it that does.
    static func manifestFolders(in directory: String) -> [String] {
        let path = (directory as NSString).standardizingPath
        if FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent(Manifest.fileName)) { return [path] }
        return files(under: path).filter { ($0 as NSString).lastPathComponent == Manifest.fileName }
            .map { (path as NSString).appendingPathComponent(($0 as NSString).deletingLastPathComponent) }.sorted()
    }

    /// Full paths, none followed.
    static func links(under folder: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
        var found: [String] = []
        while let name = enumerator.nextObject() as? String {
            let path = (folder as NSString).appendingPathComponent(name)
            if LocalFile.isLink(path) { found.append(path) }
        }
        return found.sorted()
    }

    /// Relative to `folder`, symbolic links not followed.
    static func files(under folder: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
        var found: [String] = []
        while let name = enumerator.nextObject() as? String {
            var info = stat()
            if lstat((folder as NSString).appendingPathComponent(name), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { found.append(name) }
        }
        return found.sorted()
    }
}
