import FoundationEssentials
import MonsoonEngine
import MonsoonStore

extension EpisodeQueue {
    /// In a download's `userInfo`: what a progress view names it by (a CDN's file name often means nothing).
    public static let titleKey = "title"
    /// The podcast's title and the episode's guid: which episode a download is, said to a person and in `--json`.
    public static let podcastKey = "podcast", guidKey = "guid"

    /// One download per queued episode not downloaded, into its templated name under `root` (or its podcast's own root
    /// and template in `roots` and `templates`), at its queue priority, with
    /// the feed's length and media type (a web page in answer to an episode is refused; the type names an extensionless
    /// file). Names are chosen among every episode of the library, so collisions are numbered the same way on every run.
    /// A feed's URLs may not lead to this machine or its network, unless the feed is there itself or `allowingPrivate`.
    public func requests(root: String, roots: [Int: String] = [:], templates: [Int: NamingTemplate] = [:], template: NamingTemplate,
                         allowingPrivate: Bool) throws -> [DownloadRequest] {
        struct Row {
            var id: Int
            var podcast: Int
            var values: NamingValues
            var position: Int?
            var url: URL?
            var mediaType: String?
            var length: Int?
            var state: String?
        }
        let podcasts = try podcastFolderNames()
        let titles = try PodcastRecord.names(in: database)
        let rows = try EpisodeRecord.forNaming(in: database) { row in
            Row(id: row.int(.id), podcast: row.int(.podcastID),
                values: NamingValues(podcast: podcasts[row.int(.podcastID)] ?? "", title: row.text(.title) ?? row.text(.identity) ?? "",
                                     published: row.date(.published), guid: row.text(.guid), season: row.optionalInt(.season),
                                     episode: row.optionalInt(.episode), version: row.text(.version)),
                position: row.optionalInt(.queuePosition), url: row.text(.enclosureURL).flatMap(URL.init(string:)), mediaType: row.text(.mediaType),
                length: row.optionalInt(.declaredLength), state: row.text(.downloadState))
        }
        var candidates: [NameCollisions.Candidate] = []
        candidates.reserveCapacity(rows.count)
        for row in rows {
            let rendered = (templates[row.podcast] ?? template).render(row.values)
            candidates.append(.init(id: row.id, folders: rendered.folders, stem: rendered.stem, published: row.values.published, guid: row.values.guid))
        }
        let stems = NameCollisions.resolve(candidates)
        let scopes = try addressScopes(allowingPrivate: allowingPrivate)
        let folders = Dictionary(uniqueKeysWithValues: candidates.map { ($0.id, $0.folders) })
        return rows.filter { $0.position != nil && $0.state != EpisodeDownloadState.downloaded.rawValue && $0.url != nil }
            .sorted { ($0.position ?? 0, $0.id) < ($1.position ?? 0, $1.id) }
            .map { row in
                let root = roots[row.podcast] ?? root
                let folder = ([root] + (folders[row.id] ?? [])).joined(separator: "/")
                return DownloadRequest(
                    id: Self.downloadID(ofEpisode: row.id), url: row.url!, destination: .named(folder: folder, stem: stems[row.id] ?? "untitled"),
                    priority: Self.priority(forPosition: row.position ?? 0), expectedSize: row.length,
                    expectedMediaType: row.mediaType, userInfo: ["episode": String(row.id), Self.titleKey: row.values.title,
                                                                       Self.podcastKey: titles[row.podcast] ?? "", Self.guidKey: row.values.guid ?? ""],
                    sizeLimit: SizeLimits.episode(declaredLength: row.length), root: root, addresses: scopes[row.podcast] ?? .publicOnly,
                    owner: .episode)
            }
    }

    /// By podcast id: any when `allowingPrivate` or when the feed is on a private address itself (it may point at its
    /// neighbours), else public ones only. Each feed's host is looked up once.
    public func addressScopes(allowingPrivate: Bool) throws -> [Int: AddressScope] {
        let feeds = try PodcastRecord.feeds(in: database)
        guard !allowingPrivate else { return Dictionary(uniqueKeysWithValues: feeds.map { ($0.id, .any) }) }
        var hosts: [String: AddressScope] = [:]
        return Dictionary(uniqueKeysWithValues: feeds.map { feed in
            let host = feed.feedURL.flatMap(URL.init(string:))?.host ?? ""
            if hosts[host] == nil { hosts[host] = AddressScope.isPrivate(host: host) ? .any : .publicOnly }
            return (feed.id, hosts[host] ?? .publicOnly)
        })
    }

    /// Each podcast's `{podcast}` in file names, by id (`PodcastFolders`), fixed once given.
    public func podcastFolderNames() throws -> [Int: String] {
        try database.write {
            let podcasts = try PodcastRecord.feeds(in: database)
            let names = PodcastFolders.names(podcasts)
            for podcast in podcasts where podcast.folderName == nil {
                if let name = names[podcast.id] { try PodcastRecord.setFolderName(name, of: podcast.id, in: database) }
            }
            return names
        }
    }
}
