import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonStore

/// `monsoon-manifest.json`, kept in each podcast folder of an archive: what each file is, where it came from and its
/// SHA-256, so `monsoon verify` can tell what changed.
public struct Manifest: Codable, Sendable, Equatable {
    public static let fileName = "monsoon-manifest.json"

    public struct Entry: Codable, Sendable, Equatable {
        /// `episode`, `feed` (the document as last fetched), `artwork`, `transcript`, `chapters` or `info` (`--write-info-json`).
        public var kind: String
        /// The file, relative to the manifest's folder.
        public var file: String
        /// In bytes, when the manifest was written.
        public var size: Int
        /// Lowercase hex.
        public var sha256: String
        public var guid: String?
        public var title: String?
        /// The URL asked for (credentials redacted, as in every URL here).
        public var sourceURL: String?
        /// For an episode: the URL after redirects.
        public var finalURL: String?
        /// For an episode: the `ETag` the server sent with the bytes.
        public var etag: String?
        public var lastModified: String?
        /// ISO 8601, UTC, as every moment here.
        public var downloaded: String?
        /// For an episode republished under the same identity (``EpisodeVersion``): the day this version was seen
        /// (`2026-12-01`); absent for the first version, and from manifests older than versions.
        public var version: String?
        /// For an episode: when this version was first seen; for the first version, when it was downloaded.
        public var seen: String?
        /// For an episode a cluster worker downloaded: the worker's name (`monsoon worker --name`).
        public var worker: String?
        /// For an episode a cluster worker downloaded: the machine it ran on.
        public var node: String?

        public init(kind: String, file: String, size: Int, sha256: String, guid: String? = nil, title: String? = nil,
                    sourceURL: String? = nil, finalURL: String? = nil, etag: String? = nil, lastModified: String? = nil,
                    downloaded: String? = nil, worker: String? = nil, node: String? = nil, version: String? = nil, seen: String? = nil) {
            self.kind = kind
            self.file = file
            self.size = size
            self.sha256 = sha256
            self.guid = guid
            self.title = title
            self.sourceURL = sourceURL
            self.finalURL = finalURL
            self.etag = etag
            self.lastModified = lastModified
            self.downloaded = downloaded
            self.worker = worker
            self.node = node
            self.version = version
            self.seen = seen
        }
    }

    /// Its title, else a name made from its feed URL.
    public var podcast: String
    public var feedURL: String
    public var generated: String
    /// The files: downloaded episodes, oldest first, then the extras.
    public var files: [Entry]

    public init(podcast: String, feedURL: String, generated: String, files: [Entry]) {
        self.podcast = podcast
        self.feedURL = feedURL
        self.generated = generated
        self.files = files
    }

    public static func read(in folder: String) throws -> Manifest {
        let path = folder.joiningPath(fileName)
        guard let data = FileManager.default.contents(atPath: path) else { throw EpisodeFileError(.fileSystem, "cannot read \(path)") }
        return try decode(data, path: path)
    }

    /// ``read(in:)`` once it read the file at `path`, for the fuzzer, which has bytes: refused when it is not a manifest,
    /// or when an entry names a file outside its folder.
    public static func decode(_ data: Data, path: String) throws -> Manifest {
        let manifest: Manifest
        do {
            manifest = try JSONDecoder().decode(Manifest.self, from: data)
        } catch {
            throw EpisodeFileError(.damagedManifest, "\(path) is not a Monsoon manifest (it cannot be read as one); write it again with 'monsoon archive'")
        }
        // A manifest names files inside its folder only: never one a crafted entry points elsewhere.
        if let outside = manifest.files.first(where: { !Self.isInside($0.file) }) {
            throw EpisodeFileError(.damagedManifest, "\(path) lists '\(outside.file)', which is not inside its folder; it was not written by Monsoon")
        }
        // Nor the folder's own files as others: a repair would write over the manifest, or the feed's copy with an episode.
        if let own = manifest.files.first(where: { Self.misnamesOwnFile($0) }) {
            throw EpisodeFileError(.damagedManifest, "\(path) lists '\(own.file)', the podcast folder's own file, as \(own.kind == "episode" ? "an" : "a") \(own.kind); "
                                   + "it was not written by Monsoon")
        }
        return manifest
    }

    /// Whether `entry` names the manifest itself (never listed), or the feed's copy as anything but the feed;
    /// `./` components and repeated slashes count for nothing, as for the system.
    static func misnamesOwnFile(_ entry: Entry) -> Bool {
        let file = entry.file.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
        return file == fileName || (file == "feed.xml" && entry.kind != "feed")
    }

    /// No leading `/`, no `..`, no NUL, and not the folder itself (`.`, `./`, found by fuzzing: `verify` listed the
    /// folder as a missing file).
    package static func isInside(_ file: String) -> Bool {
        let parts = file.split(separator: "/")
        return !file.hasPrefix("/") && !file.contains("\0") && !parts.contains("..") && parts.contains { $0 != "." }
    }

    /// Atomically: a reader never sees half a manifest.
    public func write(in folder: String) throws {
        try AtomicFile.write(prettyJSON(), to: folder.joiningPath(Self.fileName), mode: 0o644)
    }

    /// ISO 8601 to the second, in UTC.
    public static func timestamp(_ date: Date) -> String { UTCDate.iso(date) }

    /// This manifest, with every file of `earlier` it does not list itself kept as `earlier` had it.
    ///
    /// A manifest is only ever added to: a run that knows fewer files (another podcast's once in the same folder, a
    /// library started afresh, a file deleted by hand) must not drop the others, which keep their size and SHA-256 so
    /// `verify` still tells a file that went or changed. Only an episode fetched again under another name replaces its
    /// old entry, once the old file in `folder` is gone. An episode is its guid and `version`: an earlier version whose
    /// file went by hand stays listed, so `verify` says it is missing (``forget(fileAt:)`` removes one on purpose).
    public func merged(over earlier: Manifest, in folder: String) -> Manifest {
        struct Key: Hashable {
            var guid: String
            var version: String?
        }
        var merged = self
        let listed = Set(files.map(\.file))
        let episodes = Set(files.compactMap { entry in entry.kind == "episode" ? entry.guid.map { Key(guid: $0, version: entry.version) } : nil })
        merged.files += earlier.files.filter { entry in
            guard !listed.contains(entry.file) else { return false }
            // An episode's sidecar goes with it.
            guard entry.kind == "episode" || entry.kind == "info", let guid = entry.guid,
                  episodes.contains(Key(guid: guid, version: entry.version)) else { return true }
            return FileManager.default.fileExists(atPath: folder.joiningPath(entry.file))
        }
        return merged
    }

    /// Takes the file at `path`, deleted on purpose (`monsoon delete`), out of the manifest that lists it, if any.
    public static func forget(fileAt path: String) throws {
        guard let folder = folder(listing: path) else { return }
        var manifest = try read(in: folder)
        let file = String(path.dropFirst(folder.count + 1))
        let before = manifest.files.count
        manifest.files.removeAll { $0.file == file }
        if manifest.files.count != before { try manifest.write(in: folder) }
    }

    /// The nearest folder holding a manifest, the file's own or one of the few above it (a template may make folders
    /// per year); nil for a file outside any archive.
    public static func folder(listing path: String) -> String? {
        var folder = path.parentPath
        for _ in 0..<4 {
            guard folder.count > 1 else { return nil }
            if FileManager.default.fileExists(atPath: folder.joiningPath(fileName)) { return folder }
            folder = folder.parentPath
        }
        return nil
    }
}

extension EpisodeFiles {
    /// An extra file of an archived podcast (feed snapshot, artwork, transcript, chapters).
    public struct Extra: Sendable, Equatable {
        /// Only a file inside the manifest's folder is listed.
        public var path: String
        /// As `Manifest.Entry.kind`.
        public var kind: String
        /// Redacted when written to the manifest.
        public var sourceURL: String?
    }

    /// The manifest of `podcast`'s files under `folder`: its downloaded episodes whose file is there, and `extras`.
    /// Files not hashed yet are given the digest their download worked out as it wrote them, else hashed now (and the
    /// hash kept: a hash is what says a manifest lists the file).
    public func manifest(podcast: Int, folder: String, extras: [Extra]) throws -> Manifest {
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        let records = try EpisodeRecord.ofPodcast(podcast, in: database).filter { $0.isDownloaded && $0.episode.fileName != nil }.sorted(by: EpisodeRecord.oldestFirst)
        let digests = try downloadDigests(of: records.filter { $0.sha256 == nil })
        var entries: [Manifest.Entry] = []
        // The new hashes are kept in one transaction (a commit each would cost a first archive of many episodes a
        // commit each): once the files are listed, or when one fails the listing, as they were kept one by one.
        var (hashed, kept): ([(episode: Int, sha256: String)], Bool) = ([], false)
        func keepHashes() throws {
            guard !hashed.isEmpty else { return }
            try database.write { for (episode, sha256) in hashed { try EpisodeRecord.setSHA256(sha256, of: episode, in: database) } }
        }
        defer { if !kept { try? keepHashes() } }   // the failure reported is the listing's; a hash not kept is only made again
        // Each folder's names, read once (nil: it could not be listed, and each name is looked at): most episodes have no
        // sidecar, and a look at each one's name to find so was a sixth of a large archive's last step.
        var listings: [String: Set<String>?] = [:]
        func listed(_ path: String) -> Bool {
            let folder = path.parentPath
            if listings.index(forKey: folder) == nil {
                // Unreadable (not ours, say): its sidecars are looked at one by one, as any file is.
                listings[folder] = (try? FileManager.default.contentsOfDirectory(atPath: folder)).map(Set.init)
            }
            return listings[folder]!.map { $0.contains(path.fileName) } ?? true
        }
        // An episode's `--write-info-json` sidecar (never read through a link) carries its episode's version, so a
        // merge keeps it exactly when it keeps that version.
        func appendSidecar(of path: String, guid: String?, title: String?, version: String?) throws {
            let sidecar = InfoSidecar.path(for: path)
            guard listed(sidecar), let size = Self.size(of: sidecar), !LocalFile.isLink(sidecar) else { return }
            entries.append(Manifest.Entry(kind: "info", file: String(sidecar.dropFirst(prefix.count)), size: size,
                                          sha256: try EpisodeFiles.sha256(ofFile: sidecar), guid: guid, title: title, version: version))
        }
        // Earlier versions of episodes first (oldest episode first), then the newest of each.
        for (guid, title, version) in try keptVersions(podcast: podcast) {
            guard let path = version.file, path.hasPrefix(prefix), let size = Self.size(of: path) else { continue }
            entries.append(Manifest.Entry(
                kind: "episode", file: String(path.dropFirst(prefix.count)), size: size,
                sha256: try version.sha256 ?? EpisodeFiles.sha256(ofFile: path), guid: guid, title: title,
                sourceURL: version.url.map(Redaction.redact), finalURL: version.finalURL.map(Redaction.redact), etag: version.etag,
                lastModified: version.lastModified, downloaded: version.downloaded.map(Manifest.timestamp), version: version.name, seen: version.seen.map(Manifest.timestamp)))
            try appendSidecar(of: path, guid: guid, title: title, version: version.name)
        }
        for row in records {
            let (episode, path) = (row.episode, row.episode.fileName ?? "")
            guard path.hasPrefix(prefix), let (size, changed) = DownloadDigest.sizeAndChange(of: path) else { continue }   // moved away or deleted
            let sha = try row.sha256 ?? {
                let sha = try digests[row.id].flatMap { $0.stillHolds(size: size, changed: changed) ? $0.sha256 : nil } ?? EpisodeFiles.sha256(ofFile: path)
                hashed.append((row.id, sha))
                return sha
            }()
            entries.append(Manifest.Entry(
                kind: "episode", file: String(path.dropFirst(prefix.count)), size: size, sha256: sha, guid: episode.guid, title: episode.title,
                sourceURL: (row.fileURL ?? row.enclosure).map(Redaction.redact), finalURL: row.finalURL.map(Redaction.redact), etag: row.etag,
                lastModified: row.lastModified, downloaded: row.archivedAt.map(Manifest.timestamp), version: row.version,
                seen: (row.versionSeen ?? row.archivedAt).map(Manifest.timestamp)))
            try appendSidecar(of: path, guid: episode.guid, title: episode.title, version: row.version)
        }
        for extra in extras where extra.path.hasPrefix(prefix) {
            guard let size = Self.size(of: extra.path) else { continue }
            entries.append(Manifest.Entry(kind: extra.kind, file: String(extra.path.dropFirst(prefix.count)), size: size,
                                          sha256: try EpisodeFiles.sha256(ofFile: extra.path), sourceURL: extra.sourceURL.map(Redaction.redact)))
        }
        kept = true   // before: a failed save is not made again by the defer
        try keepHashes()
        let feed = try PodcastRecord.find(podcast, in: database)
        return Manifest(podcast: feed?.name ?? "", feedURL: Redaction.redact(feed?.feedURL.absoluteString ?? ""), generated: Manifest.timestamp(Date()), files: entries)
    }

    /// The SHA-256 each episode's download worked out as it wrote the file (`Download.checksum`), by episode: only a
    /// completed download's, of the file the episode has, and none a hook ran on (it may have changed the file).
    private func downloadDigests(of records: [EpisodeRecord]) throws -> [Int: DownloadDigest] {
        guard !records.isEmpty else { return [:] }
        let files = Dictionary(records.map { (EpisodeQueue.downloadID(ofEpisode: $0.id), (episode: $0.id, path: $0.episode.fileName)) },
                               uniquingKeysWith: { first, _ in first })
        let hooked = try HookLedger.hooked(Array(files.keys), in: database)
        var digests: [Int: DownloadDigest] = [:]
        for state in try downloads.states(of: Array(files.keys)) where state.status == .completed && state.owner == .episode && !hooked.contains(state.id) {
            if let checksum = state.checksum, let file = files[state.id], state.filePath == file.path {
                digests[file.episode] = DownloadDigest(sha256: checksum, bytes: state.bytes, saved: state.updated)
            }
        }
        return digests
    }
}

/// A download's digest of the file it wrote, with the size it wrote and when its row last changed.
private struct DownloadDigest {
    var sha256: String
    var bytes: Int
    var saved: Date

    /// Whether the file, of `size` bytes and last changed at `changed` now, is still as the download left it: the same
    /// size, and no change to it (its inode's ctime, which only the kernel sets) after the row said it was complete.
    /// Else it is hashed.
    func stillHolds(size: Int, changed: Double) -> Bool {
        size == bytes && changed <= saved.timeIntervalSince1970
    }

    /// The size of the regular file at `path` (as `EpisodeFiles.size(of:)`) and its ctime, in one look.
    static func sizeAndChange(of path: String) -> (size: Int, changed: Double)? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (Int(info.st_size), Double(info.st_ctim.tv_sec) + Double(info.st_ctim.tv_nsec) / 1e9)
    }
}
