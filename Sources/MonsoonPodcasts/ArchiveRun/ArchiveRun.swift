import Foundation
import MonsoonEngine
import MonsoonStore

/// The archive's side of `monsoon archive` that needs no terminal: where each podcast's folder
/// is under the root, the manifests checked before a run and written after it, and the refusal
/// to write through a symbolic link. The command fetches, downloads and says what happens.
public struct ArchiveRun: Sendable {
    /// One podcast of the run: what was chosen, and its folder.
    public struct Member: Sendable {
        public var podcast: Podcast
        public var selection: ArchiveSelection
        /// The podcast's own folder under the root (its manifest's), when the template gives one.
        public var folder: String?
        /// The files beside its episodes its manifest lists: the feed, artwork, transcripts, chapters.
        public var extras: [EpisodeFiles.Extra] = []

        /// A podcast of the run, with its choice and folder.
        public init(podcast: Podcast, selection: ArchiveSelection, folder: String?) {
            self.podcast = podcast
            self.selection = selection
            self.folder = folder
        }
    }

    /// The archive's root.
    public var root: String
    /// How files are named under it.
    public var naming: NamingTemplate
    /// Each podcast's folder name (`EpisodeQueue.podcastFolderNames()`): two whose titles come
    /// out the same are numbered.
    public var folderNames: [Int: String]

    /// A run into `root`, naming with `naming`.
    public init(root: String, naming: NamingTemplate, folderNames: [Int: String]) {
        self.root = root
        self.naming = naming
        self.folderNames = folderNames
    }

    /// `podcast`'s folder under the root, when the template gives one.
    public func folder(of podcast: Podcast) -> String? {
        naming.podcastFolder(folderNames[podcast.id] ?? podcast.name).map { root + "/" + $0 }
    }

    /// The first symbolic link on the way to `podcast`'s folder, if any: nothing of it is written.
    public func link(to podcast: Podcast) -> String? {
        folder(of: podcast).flatMap { LocalFile.firstLink(below: root, in: $0) }
    }

    /// Why nothing is written through `link` (a podcast folder, or the manifest itself): the
    /// archive's files never land outside its root through one.
    public func linkMessage(_ link: String) -> String {
        "\(link) is a symbolic link, and Monsoon never writes through one inside \(root): replace it with a real folder or file (or remove it), then run again"
    }

    /// A manifest that cannot be read stops the run before anything is written or downloaded:
    /// what the run adds could not be recorded in it, and writing a new one would forget the
    /// files it lists. It is left as it is. (A folder or manifest that is a link is refused later,
    /// by the podcast alone, and is not read here.)
    public func checkManifests(of podcasts: [Podcast]) throws(EpisodeFileError) {
        for podcast in podcasts {
            guard let folder = folder(of: podcast) else { continue }
            let path = folder + "/" + Manifest.fileName
            guard LocalFile.firstLink(below: root, in: path) == nil, FileManager.default.fileExists(atPath: path) else { continue }
            do { _ = try Manifest.read(in: folder) } catch {
                throw EpisodeFileError(.damagedManifest, "\(path) cannot be read as a Monsoon manifest, so nothing was archived and it was left as it is; "
                                       + "move it away (the next archive writes a new one), then run again")
            }
        }
    }

    /// Writes `member`'s manifest from the files themselves (those of its extras still there),
    /// merged into what the folder's manifest lists already, never written over it.
    public func writeManifest(of member: Member, files: EpisodeFiles) throws {
        guard let folder = member.folder, FileManager.default.fileExists(atPath: folder) else { return }
        if let link = LocalFile.firstLink(below: root, in: folder + "/" + Manifest.fileName) { throw EpisodeFileError(linkMessage(link)) }
        var manifest = try files.manifest(podcast: member.podcast.id, folder: folder,
                                          extras: member.extras.filter { FileManager.default.fileExists(atPath: $0.path) })
        if FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent(Manifest.fileName)) {
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
