import FoundationEssentials

/// A subscribed feed.
public struct Podcast: Sendable, Equatable, Identifiable {
    public var id: Int
    /// The feed's URL (credentials included: use `Redaction` before printing it).
    public var feedURL: URL
    // Title, author and description are kept when a refresh finds none; a feed that never had a title is given a name
    // made from its URL.
    public var title: String?
    public var author: String?
    public var description: String?
    public var link: URL?
    public var artworkURL: URL?
    public var language: String?
    public var lastRefresh: Date?
    /// Why the last refresh failed, if it did.
    public var lastError: String?
    /// HTTP validators for a conditional refresh.
    public var etag: String?
    public var lastModified: String?
    public var episodeCount: Int

    /// The title, else a name made from the feed's URL (``FallbackName/podcast(feedURL:)``): never blank, never with credentials.
    public var name: String { title ?? FallbackName.podcast(feedURL: feedURL) }
}

/// Where an episode's download stands, as the user sees it.
///
/// `@nonexhaustive`: it follows the engine's statuses and may gain states, so a `switch` outside this package needs a `default`.
@nonexhaustive
public enum EpisodeDownloadState: String, Sendable, CaseIterable {
    /// The engine's download as of the last reconcile (`queued` also while it waits to retry); `none`: not queued.
    case none, queued, downloading, paused, downloaded, failed
}

/// One episode of a podcast, with the user's state.
public struct Episode: Sendable, Equatable, Identifiable {
    /// The episode's id in the library; its download is `e<id>` in the engine.
    public var id: Int
    public var podcastID: Int
    public var guid: String?
    /// What identifies the item across refreshes (see `ParsedEpisode.identity`).
    public var identity: String
    public var title: String?
    public var enclosureURL: URL?
    public var mediaType: String?
    /// The enclosure's declared length in bytes; nil when missing or 0.
    public var declaredLength: Int?
    public var published: Date?
    /// Whole seconds.
    public var duration: Int?
    /// `itunes:season`.
    public var season: Int?
    /// `itunes:episode`.
    public var episodeNumber: Int?
    /// As `ParsedEpisode.summary`.
    public var summary: String?
    public var link: URL?
    public var imageURL: URL?
    public var transcriptURL: URL?
    public var chaptersURL: URL?
    // The user's state: never changed by a refresh.
    /// As of the last `EpisodeQueue.reconcile`.
    public var downloadState: EpisodeDownloadState
    /// While the download is failed or waiting to retry.
    public var downloadError: String?
    /// The full path (not just the name), once the engine has chosen it.
    public var fileName: String?
    /// As the engine reported it; 0 when not downloaded.
    public var bytesOnDisk: Int
    /// Seconds.
    public var position: Double
    /// Marked played, by hand or by playing it to near its end.
    public var played: Bool
    public var queuePosition: Int?
}

/// What a refresh did.
public struct RefreshSummary: Sendable, Equatable {
    public var podcastID: Int
    /// The feed answered 304 Not Modified.
    public var unchanged: Bool = false
    public var added: Int = 0
    /// Known episodes whose feed metadata changed (a new title, date or enclosure…).
    public var updated: Int = 0
    /// Items that repeated an earlier one.
    public var duplicates: Int = 0
    /// Pages read (paged feeds, RFC 5005).
    public var pages: Int = 0
    /// The new feed URL, when a permanent redirect or `itunes:new-feed-url` moved it.
    public var movedTo: URL?
    /// The first page as fetched, when the library keeps them.
    public var document: Data?
    /// A later page of a paged feed could not be read (the message names it, redacted): the pages before it were
    /// stored; this is the podcast's last error, and the next refresh reads the whole feed again.
    public var pageError: FeedError?
    /// The web page given to subscribe, when it named the feed.
    public var foundOnPage: URL?
}
