import Foundation

/// A subscribed feed.
public struct Podcast: Sendable, Equatable, Identifiable {
    public var id: Int
    /// The feed's URL (credentials included: use `Redaction` before printing it).
    public var feedURL: URL
    public var title: String?
    public var author: String?
    public var description: String?
    public var link: URL?
    public var artworkURL: URL?
    public var language: String?
    /// When the feed was last fetched successfully.
    public var lastRefresh: Date?
    /// Why the last refresh failed, if it did.
    public var lastError: String?
    /// HTTP validators for a conditional refresh.
    public var etag: String?
    public var lastModified: String?
    public var episodeCount: Int

    /// The title, else a name made from the feed's URL (see ``FallbackName/podcast(feedURL:)``):
    /// never blank, never with credentials.
    public var name: String { title ?? FallbackName.podcast(feedURL: feedURL) }
}

/// Where an episode's download stands, as the user sees it.
public enum EpisodeDownloadState: String, Sendable, CaseIterable {
    case none, queued, downloading, paused, downloaded, failed
}

/// One episode of a podcast, with the user's state.
public struct Episode: Sendable, Equatable, Identifiable {
    public var id: Int
    public var podcastID: Int
    /// The item's `<guid>` (Atom `<id>`), nil when the item has none.
    public var guid: String?
    /// What identifies the item across refreshes (see `ParsedEpisode.identity`).
    public var identity: String
    public var title: String?
    public var enclosureURL: URL?
    public var mediaType: String?
    public var declaredLength: Int?
    public var published: Date?
    /// Whole seconds.
    public var duration: Int?
    public var season: Int?
    public var episodeNumber: Int?
    public var summary: String?
    public var link: URL?
    public var imageURL: URL?
    public var transcriptURL: URL?
    public var chaptersURL: URL?
    // The user's state: never changed by a refresh.
    public var downloadState: EpisodeDownloadState
    public var downloadError: String?
    public var fileName: String?
    public var bytesOnDisk: Int
    /// Playback position, in seconds.
    public var position: Double
    public var played: Bool
    /// Place in the user's episode queue, nil when not queued.
    public var queuePosition: Int?
}

/// What a refresh did.
public struct RefreshSummary: Sendable, Equatable {
    public var podcastID: Int
    /// The feed answered 304 Not Modified.
    public var unchanged: Bool = false
    public var added: Int = 0
    public var updated: Int = 0
    /// Items left out because their guid repeated an earlier one.
    public var duplicates: Int = 0
    /// Pages read (paged feeds, RFC 5005).
    public var pages: Int = 0
    /// The new feed URL, when a permanent redirect or `itunes:new-feed-url` moved it.
    public var movedTo: URL?
    /// The feed's document (first page) as fetched, when the library keeps them.
    public var document: Data?
    /// A later page of a paged feed could not be read (the message names the page, redacted, and
    /// why). The episodes of the pages before it were stored; the error is the podcast's last
    /// error, and the next refresh reads the whole feed again.
    public var pageError: FeedError?
    /// The web page that was given to subscribe, when it named the feed subscribed to.
    public var foundOnPage: URL?
}
