import Foundation
import MonsoonEngine

/// What `monsoon play` plays: an episode's downloaded file, else its enclosure URL.
public struct PlaybackItem: Sendable, Equatable {
    /// Where the sound comes from.
    ///
    /// `@nonexhaustive`: more sources may come, so a `switch` outside this package needs a `default`.
    @nonexhaustive
    public enum Source: Sendable, Equatable {
        /// The downloaded file: plays with no network.
        case file(String)
        /// The enclosure URL, streamed (http and https only).
        case stream(URL)
    }

    /// The episode being played.
    public var episodeID: Int
    /// "Podcast: Episode", for the status line.
    public var title: String
    /// The file or the stream to hand the player.
    public var source: Source
    /// The saved position, in seconds.
    public var position: Double
    /// The duration the feed gives, in seconds (the player's own, once known, is better).
    public var duration: Double?
}

/// The rules of playback, as pure functions.
public enum PlaybackRules {
    /// Whether playback that ended at `position` counts as having played the episode: only when
    /// it ended within `threshold` seconds of the end. The player stopping is not enough: mpv
    /// reports an end of file for `--length`, `--end` or a quit too.
    public static func isPlayed(position: Double, duration: Double?, threshold: Double) -> Bool {
        guard let duration, duration > 0 else { return false }
        return position >= duration - threshold
    }

    /// Why `url` cannot be streamed, or nil when it can: only http and https reach the player, so
    /// a feed cannot make it open a local file or speak another protocol.
    public static func streamRefusal(_ url: URL) -> String? {
        guard !DownloadRequest.isDownloadable(url) else { return nil }
        return "only http and https enclosures are streamed, and this one is \(Redaction.redact(url))"
    }

    /// A position as `m:ss` or `h:mm:ss`.
    public static func clock(_ seconds: Double) -> String {
        let total = max(0, Int(seconds.rounded(.down)))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }
}
