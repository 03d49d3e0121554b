import MonsoonEngine
import MonsoonPodcasts

/// What an episode's download is known by: its title, its podcast's and its guid, from the
/// download's `userInfo` (one queued by an earlier version has a title at most).
struct EpisodeLabel: Equatable {
    var title: String
    var podcast: String?
    var guid: String?

    /// Nil for a download that is no episode's (a `get`'s).
    init?(_ request: DownloadRequest) {
        guard let title = request.userInfo[EpisodeQueue.titleKey], !title.isEmpty else { return nil }
        self.title = title
        podcast = request.userInfo[EpisodeQueue.podcastKey].flatMap { $0.isEmpty ? nil : $0 }
        guid = request.userInfo[EpisodeQueue.guidKey].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `--json`'s fields: `podcast` (its title, or null) and `episode` (`title`, `guid`).
    var jsonFields: [(String, String)] {
        [("podcast", podcast.map(JSONText.string) ?? "null"),
         ("episode", "{\"title\": \(JSONText.string(title)), \"guid\": \(guid.map(JSONText.string) ?? "null")}")]
    }

    /// `Podcast · Title` (the title alone unless `withPodcast`), escaped, in at most `width`
    /// columns. What gives way first: the title's numbering ("Episode 11: "), which the podcast's
    /// other episodes share, then the middle of the title (down to 12 columns), then of a podcast
    /// name over half the room.
    func fitted(width: Int, withPodcast: Bool) -> String {
        let title = TerminalText.escape(title, keepingLayout: false)
        guard let podcast = withPodcast ? podcast.map({ TerminalText.escape($0, keepingLayout: false) }) : nil else {
            return TerminalText.middleCut(TerminalText.displayWidth(title) <= width ? title : Self.withoutNumbering(title), width: width)
        }
        if TerminalText.displayWidth(podcast) + 3 + TerminalText.displayWidth(title) <= width { return "\(podcast) · \(title)" }
        let telling = Self.withoutNumbering(title), room = width - 3
        guard room >= 8 else { return TerminalText.middleCut("\(podcast) · \(telling)", width: width) }
        let forPodcast = min(TerminalText.displayWidth(podcast), max(room / 2, room - min(12, TerminalText.displayWidth(telling))))
        return TerminalText.middleCut(podcast, width: forPodcast) + " · " + TerminalText.middleCut(telling, width: room - forPodcast)
    }

    /// "On curl" of "Episode 11: On curl", "#42 - On curl" or "S2E3 | On curl": what comes before
    /// the first such separator, when it is short (three words at most) and numbers the episode.
    static func withoutNumbering(_ title: String) -> String {
        for separator in [": ", " - ", " – ", " — ", " | "] {
            guard let range = title.firstRange(of: separator) else { continue }
            let head = title[..<range.lowerBound]
            if head.count <= 24, head.split(separator: " ").count <= 3, head.contains(where: \.isNumber), range.upperBound < title.endIndex { return String(title[range.upperBound...]) }
        }
        return title
    }
}
