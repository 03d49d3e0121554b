import FoundationEssentials
import MonsoonEngine
import MonsoonStore

extension EpisodeQueue {
    /// A podcast's episodes as an archive run chooses among them, with the ledger.
    public func archiveCandidates(podcast: Int) throws -> [ArchiveSelection.Candidate] {
        try EpisodeRecord.ofPodcast(podcast, in: database).map { record in
            let episode = record.episode
            let missing = !record.isDownloaded || episode.fileName.map { EpisodeFiles.size(of: $0) == nil } ?? true
            var candidate = ArchiveSelection.Candidate(id: episode.id, title: episode.title ?? episode.identity, published: episode.published,
                                                       feedOrder: record.feedOrder, hasEnclosure: episode.enclosureURL != nil,
                                                       archived: record.archivedAt != nil, fileMissing: missing)
            // Archived, and now not downloaded: `delete` reset it (a refetch queues it at once).
            candidate.deleted = episode.downloadState == .none
            return candidate
        }
    }

    /// Whether a podcast's feed URL, or a URL of one of its episodes, carries credentials (a user and password, a token):
    /// its feed copy in an archive is then kept private.
    public static func carriesCredentials(podcast: Int, in database: Database) throws -> Bool {
        let feed = try PodcastRecord.find(podcast, in: database).map { [$0.feedURL.absoluteString] } ?? []
        let urls = try feed + EpisodeRecord.urls(ofPodcast: podcast, in: database)
        return urls.contains { text in text.split(separator: " ").contains { Redaction.redact(String($0)) != $0 } }
    }

    /// 0 with none: episodes a refresh adds get higher ones.
    public func highestEpisodeID() throws -> Int {
        try EpisodeRecord.highestID(in: database)
    }

    /// A podcast's episodes past `id` with a media file, never downloaded, oldest first: what a refresh brought.
    public func newEpisodes(podcast: Int, after id: Int) throws -> [Int] {
        try EpisodeRecord.new(podcast: podcast, after: id, in: database)
    }

    /// What arrived since the podcast's last queued or downloaded episode, after its back catalogue, never queued: what
    /// auto-download, had it been on, would have queued (`queue add --new`).
    public func arrivedEpisodes(podcast: Int) throws -> [Int] {
        try EpisodeRecord.arrived(podcast: podcast, in: database)
    }

    /// `--refetch-missing`: the episode is no longer "downloaded", and the engine forgets the finished download.
    public func forgetMissingDownloads(_ ids: [Int]) throws {
        try EpisodeFiles.forgetFiles(of: ids, downloads: downloads, database: database)
    }
}

extension NamingTemplate {
    /// `{podcast}/…`, as the default: each podcast's files are then in a folder of their own.
    package var startsWithPodcastFolder: Bool {
        components.count > 1 && components[0] == [.variable("podcast")]
    }

    /// When the template's first folder depends on the podcast alone; nil when it varies by episode or there is none.
    public func podcastFolder(_ podcast: String) -> String? {
        guard components.count > 1, let first = components.first,
              first.allSatisfy({ if case .variable(let name) = $0 { return name == "podcast" } else { return true } }) else { return nil }
        let rendered = first.map { part -> String in
            switch part {
            case .literal(let text): return text
            case .variable: return Self.clean(podcast)
            }
        }.joined()
        return finished(rendered, limit: 255)
    }
}

extension PodcastLibrary {
    /// A feed and all its pages, stored nowhere (an archive's dry run), with the identities of its episodes downloaded
    /// once, when it is subscribed. Unlike a refresh, this holds every episode in memory: the plan lists them all.
    public func preview(_ url: URL) async throws -> (feed: ParsedFeed, archived: Set<String>, podcastID: Int?) {
        guard var loaded = try await fetcher.load(url, followPages: true) else {
            throw FeedError(.empty, "cannot fetch \(Redaction.redact(url)): \(HTTPStatusText.answered(304)) to a first request")
        }
        let feed = try await fetcher.parseAll(&loaded, from: url)
        let finalURL = loaded.first.finalURL
        return try await onDatabase {
            guard let podcast = try podcast(withFeedURL: url) ?? podcast(withFeedURL: finalURL) else { return (feed, [], nil) }
            let archived = try EpisodeRecord.ofPodcast(podcast.id, in: database).filter { $0.archivedAt != nil }.map(\.episode.identity)
            return (feed, Set(archived), podcast.id)
        }
    }
}
