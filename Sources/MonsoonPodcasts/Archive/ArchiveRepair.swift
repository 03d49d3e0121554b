import Foundation
import MonsoonEngine

/// `monsoon verify --repair`: which files of an archive to fetch again, from where, and what to
/// do with the bytes that came. The decisions are pure; the command does the fetching.
///
/// The manifest's SHA-256 is what the archive promised: a file is only ever replaced by bytes
/// that have it. When the server now serves other bytes, the file on disk stays as it is.
public enum ArchiveRepair {
    /// One file to repair: where it is, what its manifest says of it, and where to fetch it.
    public struct Target: Sendable, Equatable {
        /// The file's full path.
        public var path: String
        /// The entry of its folder's manifest.
        public var entry: Manifest.Entry
        /// Whether it is missing (else changed).
        public var missing: Bool
        /// Where to fetch it; nil when there is nowhere (`reason` says why).
        public var url: URL?
        /// Why there is no URL to fetch it from.
        public var reason: String?

        /// A target with every field given.
        public init(path: String, entry: Manifest.Entry, missing: Bool, url: URL?, reason: String? = nil) {
            self.path = path
            self.entry = entry
            self.missing = missing
            self.url = url
            self.reason = reason
        }
    }

    /// What became of a fetched file.
    ///
    /// `@nonexhaustive`: more verdicts may come, so a `switch` outside this package needs a `default`.
    @nonexhaustive
    public enum Verdict: Sendable, Equatable {
        /// The bytes are those the manifest lists: they take the file's place.
        case matches
        /// The server serves other bytes now: the fetched copy goes, the file stays as it is.
        case differs(size: Int, sha256: String)
    }

    /// The verdict on bytes of `size` and `sha256` fetched for `entry`.
    public static func judge(size: Int, sha256: String, for entry: Manifest.Entry) -> Verdict {
        size == entry.size && sha256 == entry.sha256 ? .matches : .differs(size: size, sha256: sha256)
    }

    /// Where a fetched copy is kept until it is judged: beside the file (the same file system, so
    /// taking its place is one atomic rename), hidden, and ending in `.part`, which `verify` leaves
    /// out, as the engine's own part files: a repair killed midway leaves no "extra" file.
    public static func temporaryPath(for path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return (folder as NSString).appendingPathComponent("." + (path as NSString).lastPathComponent + ".monsoon-repair.part")
    }

    /// The files of `report` to repair (missing and changed ones), each with its manifest entry and
    /// the URL `source` gives for it (nil: the reason it returns instead).
    /// - Parameter source: where to fetch an entry of the manifest whose feed URL is given, or why not.
    /// - Throws: `EpisodeFileError` when a manifest cannot be read again.
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
