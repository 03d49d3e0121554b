import FoundationEssentials
import MonsoonEngine

/// What `monsoon play` plays: an episode's downloaded file, else its enclosure URL.
public struct PlaybackItem: Sendable, Equatable {
    /// `@nonexhaustive`: more sources may come, so a `switch` outside this package needs a `default`.
    @nonexhaustive
    public enum Source: Sendable, Equatable {
        /// The downloaded file: plays with no network.
        case file(String)
        /// The enclosure URL, streamed (http and https only).
        case stream(URL)
    }

    public var episodeID: Int
    /// "Podcast: Episode", for the status line.
    public var title: String
    public var source: Source
    /// Seconds.
    public var position: Double
    /// What the feed gives, in seconds: the player's own, once known, is better.
    public var duration: Double?
}

public enum PlaybackRules {
    /// Only when it ended within `threshold` seconds of the end: mpv reports an end of file for `--length`, `--end` or a
    /// quit too.
    public static func isPlayed(position: Double, duration: Double?, threshold: Double) -> Bool {
        guard let duration, duration > 0 else { return false }
        return position >= duration - threshold
    }

    /// Only http and https reach the player, so a feed cannot make it open a local file or speak another protocol.
    public static func streamRefusal(_ url: URL) -> String? {
        guard !DownloadRequest.isDownloadable(url) else { return nil }
        return "only http and https enclosures are streamed, and this one is \(Redaction.redact(url))"
    }

    /// A position as `m:ss` or `h:mm:ss`.
    public static func clock(_ seconds: Double) -> String {
        let total = max(0, Int(seconds.rounded(.down)))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(cFormat: "%d:%02d:%02d", hours, minutes, rest) : String(cFormat: "%d:%02d", minutes, rest)
    }
}
