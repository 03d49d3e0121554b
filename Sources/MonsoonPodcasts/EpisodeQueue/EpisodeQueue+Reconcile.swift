import FoundationEssentials
import MonsoonEngine
import MonsoonStore

extension EpisodeQueue {
    /// Copies the engine's state of episode downloads into the episodes: state, error, file, bytes; a completed one
    /// leaves the queue (positions may then have gaps: what counts is their order). In one transaction of the
    /// library's. `episodes`: those only; nil: every episode with a download, streamed `reconcileBatch` at a time, so
    /// a queue of any size is never all in memory.
    public func reconcile(episodes: [Int]? = nil) throws {
        try database.write {
            if let episodes {
                let states = try downloads.states(of: episodes.map(Self.downloadID(ofEpisode:)))
                return try EpisodeRecord.reconcile(states.compactMap(Self.own), in: database)
            }
            var batch: [(episode: Int, state: StoredDownloadState)] = []
            // The engine's rows are read while the episodes are written, maybe on the same connection: safe, as
            // `EpisodeRecord.reconcile` writes `episodes` only, never `downloads`, whose rows are being read.
            try downloads.forEachState(ownedBy: .episode, changedSince: nil) { state in
                guard let own = Self.own(state) else { return }
                batch.append(own)
                if batch.count == Self.reconcileBatch {
                    try EpisodeRecord.reconcile(batch, in: database)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            try EpisodeRecord.reconcile(batch, in: database)
        }
    }

    private static let reconcileBatch = 1_000

    /// Only an episode's own download, under its own id.
    private static func own(_ state: StoredDownloadState) -> (episode: Int, state: StoredDownloadState)? {
        (state.owner == .episode ? episodeID(of: state.id) : nil).flatMap { downloadID(ofEpisode: $0) == state.id ? (episode: $0, state: state) : nil }
    }
}
