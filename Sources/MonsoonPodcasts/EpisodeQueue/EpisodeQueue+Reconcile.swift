import Foundation
import MonsoonEngine
import MonsoonStore

extension EpisodeQueue {
    /// Copies the engine's state of episode downloads into the episodes (all of them, or
    /// one): state, error, file, bytes; a completed one leaves the queue (positions may
    /// then have gaps: what counts is their order).
    ///
    /// The engine's rows are read through its queue's interface first (one query), then
    /// written into the episodes in one transaction of the library's.
    public func reconcile(episode: Int? = nil) throws {
        let states = try episode.map { try downloads.states(of: [Self.downloadID(ofEpisode: $0)]) }
            ?? downloads.states(ownedBy: .episode, changedSince: nil)
        try database.write {
            let statement = try database.statement(Self.reconcileSQL)
            for state in states {
                // Only an episode's own download, under its own id.
                guard state.owner == .episode, let id = Self.episodeID(of: state.id), Self.downloadID(ofEpisode: id) == state.id else { continue }
                try statement.bind(Self.values(of: state, episode: id))
                while try statement.step() {}
            }
            try statement.bind([])
        }
    }

    /// The values of `reconcileSQL`'s parameters, ?1 to ?11.
    private static func values(of state: StoredDownloadState, episode: Int) -> [SQLValueConvertible] {
        let error: String? = switch state.status {
        case .failed, .waitingToRetry: state.errorMessage
        case .queued where state.errorCode == .notEnoughDiskSpace: state.errorMessage
        default: nil
        }
        let episodeState: EpisodeDownloadState = switch state.status {
        case .completed: .downloaded
        case .failed: .failed
        case .paused: .paused
        case .downloading: .downloading
        default: .queued
        }
        return [episode, episodeState.rawValue, error, state.filePath, state.status == .completed, state.bytes, state.updated,
                state.finalURL, state.etag, state.lastModified, state.url]
    }

    /// One episode's columns from its download's state (?1 the episode, ?2 its new state,
    /// ?3 the error, ?4 the file, ?5 whether completed, ?6 bytes, ?7 when saved, ?8 the final
    /// URL, ?9 and ?10 the validators, ?11 the URL the download asked for): a completed download's
    /// fields replace the episode's, other states keep what the episode had. The enclosure a file
    /// holds (`file_url`, `file_length`, what a later feed's is compared with for a new version) is
    /// the URL its download was made from, set when the download newly completed (a later reconcile
    /// of the same download keeps it, whatever the feed says since). Its length is the feed's only
    /// while the feed still lists that URL: a feed that changed between queueing and completion
    /// leaves it unknown, so the next run compares the new enclosure with the file and asks.
    private static let reconcileSQL = """
        UPDATE episodes SET
            download_state = ?2,
            download_error = ?3,
            file_name = coalesce(?4, file_name),
            bytes_on_disk = CASE WHEN ?5 THEN ?6 ELSE bytes_on_disk END,
            queue_position = CASE WHEN ?5 THEN NULL ELSE queue_position END,
            archived_at = CASE WHEN ?5 THEN coalesce(archived_at, ?7) ELSE archived_at END,
            final_url = CASE WHEN ?5 THEN ?8 ELSE final_url END,
            etag = CASE WHEN ?5 THEN ?9 ELSE etag END,
            last_modified = CASE WHEN ?5 THEN ?10 ELSE last_modified END,
            sha256 = CASE WHEN ?5 AND download_state = 'downloaded' AND file_name IS ?4 THEN sha256 ELSE NULL END,
            file_url = CASE WHEN ?5 AND NOT (download_state = 'downloaded' AND file_name IS ?4 AND file_url IS NOT NULL)
                THEN coalesce(?11, enclosure_url) ELSE file_url END,
            file_length = CASE WHEN ?5 AND NOT (download_state = 'downloaded' AND file_name IS ?4 AND file_url IS NOT NULL)
                THEN (CASE WHEN ?11 IS NULL OR ?11 IS enclosure_url THEN declared_length END) ELSE file_length END
        WHERE id = ?1
        """
}
