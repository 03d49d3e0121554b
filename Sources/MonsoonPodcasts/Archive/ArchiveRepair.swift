import FoundationEssentials
import MonsoonEngine

/// `monsoon verify --repair`: which files of an archive to fetch again, from where, and what to do with the bytes that
/// came; the command does the fetching. A file is only ever replaced by bytes with the manifest's SHA-256.
public enum ArchiveRepair {
    public struct Target: Sendable, Equatable {
        public var path: String
        public var entry: Manifest.Entry
        /// Else changed.
        public var missing: Bool
        /// Where to fetch it; nil when there is nowhere (`reason` says why).
        public var url: URL?
        public var reason: String?
    }

    /// `@nonexhaustive`: more verdicts may come, so a `switch` outside this package needs a `default`.
    @nonexhaustive
    public enum Verdict: Sendable, Equatable {
        /// The bytes are those the manifest lists: they take the file's place.
        case matches
        /// The server serves other bytes now: the fetched copy goes, the file stays as it is.
        case differs(size: Int, sha256: String)
    }

    public static func judge(size: Int, sha256: String, for entry: Manifest.Entry) -> Verdict {
        size == entry.size && sha256 == entry.sha256 ? .matches : .differs(size: size, sha256: sha256)
    }

    /// Beside the file (one atomic rename takes its place), hidden, and ending in `.part`, which `verify` leaves out as
    /// the engine's part files: a repair killed midway leaves no "extra" file.
    public static func temporaryPath(for path: String) -> String {
        let folder = path.parentPath
        return folder.joiningPath("." + path.fileName + ".monsoon-repair.part")
    }

    /// The missing and changed files of `report`, each with the URL `source` gives for it, or the reason it gives instead.
    public static func targets(of report: ArchiveVerifier.Report,
                               source: (Manifest.Entry, _ path: String, _ feedURL: String) throws -> Result<URL, EpisodeFileError>) throws -> [Target] {
        let broken = report.missing.map { ($0, true) } + report.changed.map { ($0, false) }
        var manifests: [String: Manifest] = [:]
        var targets: [Target] = []
        for folder in report.folders {
            let prefix = folder.hasSuffix("/") ? folder : folder + "/"
            for (path, missing) in broken where path.hasPrefix(prefix) {
                // The deepest folder listing it is its manifest's (folders may nest).
                guard report.folders.filter({ path.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") }).max(by: { $0.count < $1.count }) == folder else { continue }
                if manifests[folder] == nil { manifests[folder] = try Manifest.read(in: folder) }
                guard let manifest = manifests[folder], let entry = manifest.files.first(where: { prefix + $0.file == path }) else { continue }
                switch try source(entry, path, manifest.feedURL) {
                case .success(let url): targets.append(Target(path: path, entry: entry, missing: missing, url: url))
                case .failure(let error): targets.append(Target(path: path, entry: entry, missing: missing, url: nil, reason: error.message))
                }
            }
        }
        return targets
    }
}
