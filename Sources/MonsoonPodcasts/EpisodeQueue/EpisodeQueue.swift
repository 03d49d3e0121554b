import FoundationEssentials
import MonsoonEngine
import MonsoonStore

/// The user's episode queue, in the user's order, and the bridge between episodes and the engine's downloads.
///
/// An episode's download has the id `e<episode id>` (so `pause 42` and `pause e42` name the same download). The engine
/// learns the user's order as priorities (position 1 → priority −1, …: plain downloads, at priority 0, go first), so
/// reordering changes which not-yet-started episode begins next.
///
/// - Important: like its database connection, used from one task at a time.
public final class EpisodeQueue {
    let database: Database
    /// The engine's queue, asked through its interface only: it may live in another database.
    let downloads: any DownloadStateReading & QueueHousekeeping

    /// With the engine's queue in the same SQLite file.
    public convenience init(database: Database) throws {
        try self.init(database: database, downloads: try DownloadStore(database: database))
    }

    package init(database: Database, downloads: any DownloadStateReading & QueueHousekeeping) throws {
        self.database = database
        self.downloads = downloads
        try LibrarySchema.migrator.migrate(database)
    }

    public static func downloadID(ofEpisode id: Int) -> DownloadID { DownloadID("e\(id)") }

    /// As a user types it (`e12`) or a list of ids gives it; a download whose owner is known answers
    /// `episodeID(of:)` of its request instead.
    public static func episodeID(of download: DownloadID) -> Int? {
        let text = download.rawValue
        guard text.first == "e" else { return nil }
        return Int(text.dropFirst())
    }

    /// Only for an episode's own download (its owner says so), never another whose id happens to start with "e".
    public static func episodeID(of request: DownloadRequest) -> Int? {
        request.owner == .episode ? episodeID(of: request.id) : nil
    }

    static func priority(forPosition position: Int) -> Int { -position }

    /// In the order given; those already queued stay where they are, downloaded ones are not queued again.
    /// Returns the ids added.
    /// - Throws: `LibraryError.notFound` for an id no episode has (nothing is changed).
    @discardableResult
    public func add(_ ids: [Int]) throws -> [Int] {
        try database.write {
            var added: [Int] = []
            var next = (try EpisodeRecord.lastQueuePosition(in: database) ?? 0) + 1
            for id in ids {
                guard let episode = try EpisodeRecord.queueing(id, in: database) else { throw EpisodeRecord.missing(id) }
                guard !episode.queued, !episode.downloaded else { continue }
                guard episode.hasEnclosure else { throw LibraryError(.notFound, "episode \(id) has no media file (its item has no enclosure) to download") }
                try EpisodeRecord.enqueue(id, at: next, in: database)
                next += 1
                added.append(id)
            }
            return added
        }
    }

    /// 1 is the front; past the end means the end. Returns the episodes whose position changed.
    @discardableResult
    public func move(_ id: Int, to position: Int) throws -> [(episode: Int, position: Int)] {
        try database.write {
            var order = try EpisodeRecord.queued(in: database).map(\.id)
            guard let index = order.firstIndex(of: id) else { throw LibraryError(.notFound, "episode \(id) is not in the queue; add it with 'monsoon queue add \(id)'") }
            order.remove(at: index)
            order.insert(id, at: min(max(0, position - 1), order.count))
            return try renumber(order)
        }
    }

    /// Their downloads, if any, are the caller's to remove.
    /// - Throws: `LibraryError.notFound` when one is not queued; then nothing changes.
    public func remove(_ ids: [Int]) throws {
        try database.write {
            for id in ids where try episode(withID: id)?.queuePosition == nil {
                throw LibraryError(.notFound, "episode \(id) is not in the queue; list it with 'monsoon queue'")
            }
            for id in ids { try EpisodeRecord.dequeue(id, in: database) }
        }
    }

    /// The episode's download was removed from the engine (`monsoon remove 42`): a downloaded episode stays downloaded
    /// unless its file went too; any other leaves the queue. Call `reconcile(episodes:)` before, while the download
    /// still says where it stands.
    public func downloadRemoved(episode id: Int, fileDeleted: Bool) throws {
        try EpisodeRecord.downloadRemoved(id, fileDeleted: fileDeleted, in: database)
    }

    private func renumber(_ order: [Int]) throws -> [(episode: Int, position: Int)] {
        var changed: [(Int, Int)] = []
        for (index, id) in order.enumerated() {
            if try episode(withID: id)?.queuePosition != index + 1 {
                try EpisodeRecord.setQueuePosition(index + 1, of: id, in: database)
                changed.append((id, index + 1))
            }
        }
        return changed
    }

    public func episode(withID id: Int) throws -> Episode? {
        try EpisodeRecord.find(id, in: database)?.episode
    }

    /// Each episode with its podcast's name and its download as the engine last saved it.
    public func entries() throws -> [QueueEntry] {
        let episodes = try EpisodeRecord.queued(in: database)
        let names = try PodcastRecord.names(in: database)
        // Then their downloads, by id, in batches (no join: the engine's queue may be elsewhere).
        let states = try downloadStates(of: episodes.map(\.id))
        return episodes.map { episode in
            let download = states[episode.id].map {
                QueueEntry.DownloadState(status: $0.status, bytes: $0.bytes, total: $0.total, retryAt: $0.retryAt, error: $0.currentError)
            }
            return QueueEntry(episode: episode, podcastTitle: names[episode.podcastID] ?? "", download: download)
        }
    }

    /// By episode id, for those that have one.
    func downloadStates(of episodes: [Int]) throws -> [Int: StoredDownloadState] {
        var states: [Int: StoredDownloadState] = [:]
        for state in try downloads.states(of: episodes.map(Self.downloadID(ofEpisode:))) {
            if let episode = Self.episodeID(of: state.id), Self.downloadID(ofEpisode: episode) == state.id { states[episode] = state }
        }
        return states
    }
}

/// An episode in the queue, with what the engine says of its download.
public struct QueueEntry: Sendable, Equatable {
    /// The download as the engine last saved it in its queue.
    public struct DownloadState: Sendable, Equatable {
        public var status: DownloadStatus
        /// Downloaded so far.
        public var bytes: Int
        /// Once a response has told it.
        public var total: Int?
        /// While waiting to retry.
        public var retryAt: Date?
        public var error: String?
    }

    public var episode: Episode
    /// The podcast's title (its feed URL when it has none).
    public var podcastTitle: String
    /// Nil until the episode's download is in the engine's queue.
    public var download: DownloadState?
}
