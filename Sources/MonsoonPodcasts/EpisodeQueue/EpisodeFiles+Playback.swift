import Foundation
import MonsoonStore

extension EpisodeFiles {
    /// What playing episode `id` plays: its downloaded file when it is on disk, else its enclosure.
    /// - Throws: `LibraryError.notFound` for an id no episode has, or one without an enclosure.
    public func playbackItem(_ id: Int) throws -> PlaybackItem {
        let rows = try database.statement("""
            SELECT p.title, p.feed_url, e.title, e.enclosure_url, e.download_state, e.file_name, e.position, e.duration
            FROM episodes e JOIN podcasts p ON p.id = e.podcast_id WHERE e.id = ?
            """).query([id]) { row in
            // The podcast's name as everywhere else (`Podcast.name`): its title, else one made from its URL.
            (podcast: FallbackName.podcast(title: row.text(0), feedURL: row.text(1)),
             title: row.text(2), url: row.text(3), state: row.text(4), file: row.text(5), position: row.double(6), duration: row.optionalInt(7))
        }
        guard let row = rows.first else { throw LibraryError.notFound("no episode has id \(id); list them with 'monsoon episodes PODCAST'") }
        let title = "\(row.podcast): \(row.title ?? "episode \(id)")"
        let source: PlaybackItem.Source
        // Only an absolute path is a file: mpv would read a name like `x://y` as a protocol.
        if row.state == EpisodeDownloadState.downloaded.rawValue, let file = row.file, file.hasPrefix("/"), Self.size(of: file) != nil {
            source = .file(file)
        } else if let text = row.url, let url = URL(string: text) {
            source = .stream(url)
        } else {
            throw LibraryError.notFound("episode \(id) has no download and no enclosure to stream")
        }
        return PlaybackItem(episodeID: id, title: title, source: source, position: row.position, duration: row.duration.map(Double.init))
    }

    /// The saved playback position of episode `id`, in seconds.
    public func position(of id: Int) throws -> Double {
        guard let position = try database.statement("SELECT position FROM episodes WHERE id = ?").query([id], { $0.double(0) }).first else {
            throw LibraryError.notFound("no episode has id \(id); list them with 'monsoon episodes PODCAST'")
        }
        return position
    }

    /// Saves episode `id`'s playback position.
    public func setPosition(_ seconds: Double, of id: Int) throws {
        try database.run("UPDATE episodes SET position = ? WHERE id = ?", max(0, seconds), id)
        if database.changes == 0 { throw LibraryError.notFound("no episode has id \(id); list them with 'monsoon episodes PODCAST'") }
    }

    /// Playback of episode `id` ended at `position`: an episode played to within `threshold`
    /// seconds of its end is marked played (which resets its position); otherwise the position
    /// is saved. Returns whether it was marked played.
    public func finishPlayback(_ id: Int, at position: Double, duration: Double?, threshold: Double) throws -> Bool {
        if PlaybackRules.isPlayed(position: position, duration: duration, threshold: threshold) {
            try setPlayed([id], true)
            return true
        }
        try setPosition(position, of: id)
        return false
    }
}
