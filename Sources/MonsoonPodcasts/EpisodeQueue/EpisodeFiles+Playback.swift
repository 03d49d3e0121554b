import FoundationEssentials
import MonsoonStore

extension EpisodeFiles {
    /// Its downloaded file when it is on disk, else its enclosure.
    /// - Throws: `LibraryError.notFound` for an id no episode has, or one without an enclosure.
    public func playbackItem(_ id: Int) throws -> PlaybackItem {
        let episode = try EpisodeRecord.get(id, in: database).episode
        let podcast = try PodcastRecord.find(episode.podcastID, in: database)?.name ?? ""
        let title = "\(podcast): \(episode.title ?? "episode \(id)")"
        let source: PlaybackItem.Source
        // Only an absolute path is a file: mpv would read a name like `x://y` as a protocol.
        if episode.downloadState == .downloaded, let file = episode.fileName, file.hasPrefix("/"), Self.size(of: file) != nil {
            source = .file(file)
        } else if let url = episode.enclosureURL {
            source = .stream(url)
        } else {
            throw LibraryError(.notFound, "episode \(id) has no download and no enclosure to stream")
        }
        return PlaybackItem(episodeID: id, title: title, source: source, position: episode.position, duration: episode.duration.map(Double.init))
    }

    public func position(of id: Int) throws -> Double {
        try EpisodeRecord.get(id, in: database).episode.position
    }

    public func setPosition(_ seconds: Double, of id: Int) throws {
        if try !EpisodeRecord.setPosition(max(0, seconds), of: id, in: database) { throw EpisodeRecord.missing(id) }
    }

    /// Played to within `threshold` seconds of its end, the episode is marked played (which resets its position); else
    /// the position is saved. Returns whether it was marked played.
    public func finishPlayback(_ id: Int, at position: Double, duration: Double?, threshold: Double) throws -> Bool {
        if PlaybackRules.isPlayed(position: position, duration: duration, threshold: threshold) {
            try setPlayed([id], true)
            return true
        }
        try setPosition(position, of: id)
        return false
    }
}
