import FoundationEssentials
import MonsoonEngine
import MonsoonStore

extension EpisodeQueue {
    /// Copies the engine's state of episode downloads into the episodes (all, or some): state, error, file, bytes; a
    /// completed one leaves the queue (positions may then have gaps: what counts is their order). The engine's rows are
    /// read first (one query), then written in one transaction of the library's.
    public func reconcile(episode: Int) throws {
        try reconcile(episodes: [episode])
    }

    /// `episodes`: those only (nil: every episode with a download).
    public func reconcile(episodes: [Int]? = nil) throws {
        let states = try episodes.map { try downloads.states(of: $0.map(Self.downloadID(ofEpisode:))) }
            ?? downloads.states(ownedBy: .episode, changedSince: nil)
        // Only an episode's own download, under its own id.
        let episodes = states.compactMap { state in
            (state.owner == .episode ? Self.episodeID(of: state.id) : nil).flatMap { Self.downloadID(ofEpisode: $0) == state.id ? (episode: $0, state: state) : nil }
        }
        try database.write { try EpisodeRecord.reconcile(episodes, in: database) }
    }
}
