import FoundationEssentials
import MonsoonEngine

extension ArchiveRun {
    /// `--with-artwork`, `--with-transcripts`, `--with-chapters`.
    public struct Extras: OptionSet, Sendable, Codable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        public static let artwork = Extras(rawValue: 1)
        public static let transcripts = Extras(rawValue: 2)
        public static let chapters = Extras(rawValue: 4)
    }

    /// By its owner; nil for an episode's or another download's.
    public static func extraKind(of request: DownloadRequest) -> String? {
        [.artwork: "artwork", .transcript: "transcript", .chapters: "chapters"][request.owner]
    }

    /// As plain downloads beside the episode `requests` of the `members`' podcasts.
    public func extraRequests(_ extras: Extras, for members: [Member], episodes requests: [DownloadRequest], queue: EpisodeQueue,
                              scopes: [Int: AddressScope]) throws -> [DownloadRequest] {
        var found: [DownloadRequest] = []
        for member in members where extras.contains(.artwork) {
            if let folder = member.folder, let artwork = member.podcast.artworkURL, DownloadRequest.isDownloadable(artwork) {
                found.append(DownloadRequest(id: DownloadID("a\(member.podcast.id)"), url: artwork, destination: .named(folder: folder, stem: "cover"),
                                             userInfo: [EpisodeQueue.podcastKey: member.podcast.name], sizeLimit: SizeLimits.artwork,
                                             root: root(of: member.podcast), addresses: scopes[member.podcast.id] ?? .publicOnly, owner: .artwork))
            }
        }
        guard !extras.isDisjoint(with: [.transcripts, .chapters]) else { return found }
        let members = Dictionary(members.map { ($0.podcast.id, $0) }, uniquingKeysWith: { first, _ in first })
        for request in requests {
            guard let episode = EpisodeQueue.episodeID(of: request), case .named(let folder, let stem) = request.destination,
                  let item = try queue.episode(withID: episode),   // an episode that vanished has nothing to add
                  let member = members[item.podcastID] else { continue }
            // Grouped with its podcast's episodes on a run's page.
            let podcast = [EpisodeQueue.podcastKey: member.podcast.name]
            if extras.contains(.transcripts), let url = item.transcriptURL, DownloadRequest.isDownloadable(url) {
                found.append(DownloadRequest(id: DownloadID("t\(episode)"), url: url, destination: .named(folder: folder, stem: stem + ".transcript"),
                                             userInfo: podcast, sizeLimit: SizeLimits.transcript, root: request.root, addresses: request.addresses, owner: .transcript))
            }
            if extras.contains(.chapters), let url = item.chaptersURL, DownloadRequest.isDownloadable(url) {
                found.append(DownloadRequest(id: DownloadID("c\(episode)"), url: url, destination: .named(folder: folder, stem: stem + ".chapters"),
                                             userInfo: podcast, sizeLimit: SizeLimits.chapters, root: request.root, addresses: request.addresses, owner: .chapters))
            }
        }
        return found
    }
}
