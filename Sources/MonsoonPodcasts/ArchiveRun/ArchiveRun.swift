import FoundationEssentials
import MonsoonEngine
import MonsoonStore

/// The archive's side of `monsoon archive` that needs no terminal: where each podcast's folder is under the root, the
/// manifests checked before a run and written after it, and the refusal to write through a symbolic link.
public struct ArchiveRun: Sendable {
    public struct Member: Sendable {
        public var podcast: Podcast
        public var selection: ArchiveSelection
        /// Its own folder under the root (its manifest's), when the template gives one.
        public var folder: String?
        /// The files beside its episodes its manifest lists: the feed, artwork, transcripts, chapters.
        public var extras: [EpisodeFiles.Extra] = []
    }

    public var root: String
    public var naming: NamingTemplate
    /// `EpisodeQueue.podcastFolderNames()`: two whose titles come out the same are numbered.
    public var folderNames: [Int: String]
    /// The podcasts whose own archive folder (the setting `folder`) this run keeps, instead of `root`.
    public var roots: [Int: String] = [:]
    /// The podcasts whose archive's own template (`Remembered`) this run keeps, instead of `naming`.
    public var namings: [Int: NamingTemplate] = [:]

    /// The podcast's own folder, else the run's.
    public func root(of podcast: Podcast) -> String { roots[podcast.id] ?? root }

    /// When its template gives one.
    public func folder(of podcast: Podcast) -> String? {
        (namings[podcast.id] ?? naming).podcastFolder(folderNames[podcast.id] ?? podcast.name).map { root(of: podcast) + "/" + $0 }
    }

    /// The first symbolic link on the way to the podcast's folder, if any: nothing of it is written.
    public func link(to podcast: Podcast) -> String? {
        folder(of: podcast).flatMap { LocalFile.firstLink(below: root(of: podcast), in: $0) }
    }

    /// Its folder, the template giving one, has no `feed.xml` (and no link on the way, which the run refuses).
    func lacksFeedCopy(_ podcast: Podcast) -> Bool {
        guard let folder = folder(of: podcast), link(to: podcast) == nil else { return false }
        return !FileManager.default.fileExists(atPath: folder + "/feed.xml")
    }

    /// The archive's files never land outside its root through a link (a podcast folder, or the manifest itself).
    public func linkMessage(_ link: String, of podcast: Podcast) -> String {
        "\(link) is a symbolic link, and Monsoon never writes through one inside \(root(of: podcast)): replace it with a real folder or file (or remove it), then run again"
    }

    /// A manifest that cannot be read stops the run before anything is written: what the run adds could not be recorded
    /// in it, and a new one would forget the files it lists. (One behind a link is refused later, by the podcast alone.)
    public func checkManifests(of podcasts: [Podcast]) throws(EpisodeFileError) {
        for podcast in podcasts {
            guard let folder = folder(of: podcast) else { continue }
            let path = folder + "/" + Manifest.fileName
            guard LocalFile.firstLink(below: root(of: podcast), in: path) == nil, FileManager.default.fileExists(atPath: path) else { continue }
            do { _ = try Manifest.read(in: folder) } catch {
                throw EpisodeFileError(.damagedManifest, "\(path) cannot be read as a Monsoon manifest, so nothing was archived and it was left as it is; "
                                       + "move it away (the next archive writes a new one), then run again")
            }
        }
    }

    /// From the files themselves (its extras still there), merged into what the folder's manifest lists already.
    public func writeManifest(of member: Member, files: EpisodeFiles) throws {
        guard let folder = member.folder, FileManager.default.fileExists(atPath: folder) else { return }
        if let link = LocalFile.firstLink(below: root(of: member.podcast), in: folder + "/" + Manifest.fileName) {
            throw EpisodeFileError(linkMessage(link, of: member.podcast))
        }
        var manifest = try files.manifest(podcast: member.podcast.id, folder: folder,
                                          extras: member.extras.filter { FileManager.default.fileExists(atPath: $0.path) })
        if FileManager.default.fileExists(atPath: folder.joiningPath(Manifest.fileName)) {
            let earlier: Manifest
            do { earlier = try Manifest.read(in: folder) } catch {
                // Damaged since the run's check (`checkManifests`): its files are archived, the manifest kept.
                throw EpisodeFileError(.damagedManifest, "\(folder)/\(Manifest.fileName) cannot be read as a Monsoon manifest, so it was left as it is; "
                                       + "move it away (the next archive writes a new one), then run again")
            }
            manifest = manifest.merged(over: earlier, in: folder)
        }
        try manifest.write(in: folder)
    }
}
