import FoundationEssentials
import MonsoonEngine
import MonsoonStore

/// The user's podcasts and episodes, in SQLite beside the download queue.
///
/// Each feed is parsed straight into its one transaction, its episodes handed to the database in batches
/// (see `EpisodeWriter`): a feed of a million items is stored in bounded memory, and a transaction never waits on the network.
///
/// - Important: like its database connection, used from one task at a time. Refreshing many feeds fetches them
///   concurrently through the one engine and writes each here as it comes in, one transaction per feed.
///
/// The async methods' database work runs on the library's own thread (`onDatabase`), never blocking Swift's
/// cooperative pool; the synchronous ones run on the caller's thread.
public final class PodcastLibrary {
    let database: Database
    private let executor = DatabaseExecutor(label: "monsoon.library")
    var fetcher: FeedFetcher
    /// Episodes a parse hands to the database at a time (see ``EpisodeWriter``); small in tests,
    /// so batch boundaries fall between the items that share a guid.
    var batchSize = FeedParser.defaultBatchSize

    /// Keep each feed's first page as fetched in `RefreshSummary.document`, for an archive's snapshot of it.
    public var keepsFeedDocuments: Bool {
        get { fetcher.keepsDocument }
        set { fetcher.keepsDocument = newValue }
    }

    /// A feed's later pages may be on this machine or its network (`--allow-private`, the setting `allow-private`).
    public var allowsPrivateAddresses: Bool {
        get { fetcher.allowsPrivate }
        set { fetcher.allowsPrivate = newValue }
    }

    public init(database: Database, manager: DownloadManager, limits: FeedLimits = FeedLimits()) throws {
        self.database = database
        fetcher = FeedFetcher(manager: manager, limits: limits)
        try LibrarySchema.migrator.migrate(database)
    }

    /// Runs database work that may block (a write, a wait for another process's lock) on the library's own thread, in
    /// the calling task: cancellation still reaches it (between two batches), and the cooperative pool's thread is free.
    func onDatabase<T>(_ body: () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(executor) { try body() }
    }

    /// Whether an async method's database work runs now on the library's own thread: for the tests of that thread.
    var isOnDatabase: Bool { executor.isBusy }

    /// In the order they were subscribed to.
    public func podcasts() throws -> [Podcast] {
        try PodcastRecord.all(in: database)
    }

    public func podcast(withID id: Int) throws -> Podcast? {
        try PodcastRecord.find(id, in: database)
    }

    /// A podcast by id (`12`) or by a part of its title that only one title contains.
    public func findPodcast(_ query: String) throws -> Podcast {
        let text = query.trimmingBlanks()
        if let id = Int(text), let podcast = try podcast(withID: id) { return podcast }
        let matches = try podcasts().filter { $0.name.lowercased().contains(text.lowercased()) }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty { throw LibraryError(.notFound, "no podcast has id or title '\(text)'; list them with 'monsoon podcasts'") }
        let names = matches.prefix(5).map { "\($0.id) \($0.name)" }.joined(separator: ", ")
        throw LibraryError(.ambiguous, "'\(text)' matches \(matches.count) podcasts (\(names)); give an id or more of the title")
    }

    /// A podcast's episodes, newest first (by publication date, then feed order).
    public func episodes(of podcastID: Int) throws -> [Episode] {
        try EpisodeRecord.ofPodcast(podcastID, in: database).map(\.episode)
    }

    public func episode(withID id: Int) throws -> Episode? {
        try EpisodeRecord.find(id, in: database)?.episode
    }

    /// What `subscribe(to:)` did.
    ///
    /// `@nonexhaustive`: more outcomes may come, so a `switch` outside this package needs a `default`.
    @nonexhaustive
    public enum SubscribeResult: Sendable, Equatable {
        /// A new subscription, with what reading its feed stored.
        case subscribed(Podcast, RefreshSummary)
        /// Already subscribed to this feed: nothing changed.
        case alreadySubscribed(Podcast)
    }

    /// Subscribes to the feed at `url`, reading its whole back catalogue (all pages), in one transaction: a failure
    /// (a broken feed, a full disk, a kill) leaves nothing behind.
    ///
    /// A web page that names its feed (`<link rel="alternate" type="application/rss+xml" href=…>`, or `atom+xml`)
    /// subscribes to that feed, and ``RefreshSummary/foundOnPage`` says so; only once: a page that names another page
    /// fails. A host that cannot be reached fails at once, without a refresh's retries: the user is waiting.
    public func subscribe(to url: URL) async throws -> SubscribeResult {
        try Self.checkSubscribable(url)
        if let existing = try await onDatabase({ try podcast(withFeedURL: url) }) { return .alreadySubscribed(existing) }
        var fetcher = self.fetcher
        fetcher.retriesConnectionFailures = false
        do {
            return try await subscribe(url, fetcher: fetcher, foundOnPage: nil)
        } catch let error as FeedError where error.code == .htmlPage {
            guard let named = error.alternateFeedURL else { throw error }
            try Self.checkSubscribable(named)
            if let existing = try await onDatabase({ try podcast(withFeedURL: named) }) { return .alreadySubscribed(existing) }
            do {
                return try await subscribe(named, fetcher: fetcher, foundOnPage: url)
            } catch let error as FeedError {
                throw Self.namedFeedError(error, feed: named, page: url)
            }
        }
    }

    private func subscribe(_ feedURL: URL, fetcher: FeedFetcher, foundOnPage: URL?) async throws -> SubscribeResult {
        guard var loaded = try await fetcher.load(feedURL, followPages: true) else {
            throw FeedError(.empty, "cannot fetch \(Redaction.redact(feedURL)): \(HTTPStatusText.answered(304)) to a first request")
        }
        // A private feed that moved on its host keeps its user and password (see keepingCredentials).
        let finalURL = loaded.first.movedPermanently ? Self.keepingCredentials(of: feedURL, in: loaded.first.finalURL) : feedURL
        if finalURL != feedURL, let existing = try await onDatabase({ try podcast(withFeedURL: finalURL) }) { return .alreadySubscribed(existing) }
        var summary: RefreshSummary
        while true {
            do {
                summary = try await onDatabase { try database.write {
                    let id = try PodcastRecord.insert(feedURL: finalURL, etag: loaded.first.etag, lastModified: loaded.first.lastModified, in: database)
                    let (summary, feed) = try store(loaded, podcastID: id, feedURL: finalURL, subscribing: true)
                    try PodcastRecord.markCatalogueEnd(id, in: database)
                    // An old URL whose feed announces a URL already subscribed is the same podcast.
                    if let announced = feed.newFeedURL, let existing = try podcast(withFeedURL: announced), existing.id != id {
                        throw AlreadySubscribed(podcast: existing)
                    }
                    return summary
                } }
                break
            } catch is NeedsWalk {
                try await fetcher.walk(&loaded, from: feedURL)
            } catch let signal as AlreadySubscribed {
                return .alreadySubscribed(signal.podcast)
            }
        }
        summary.movedTo = finalURL != feedURL ? finalURL : summary.movedTo
        summary.foundOnPage = foundOnPage
        guard let podcast = try await onDatabase({ [summary] in try podcast(withID: summary.podcastID) }) else {
            throw LibraryError(.notFound, "the new podcast vanished")
        }
        return .subscribed(podcast, summary)
    }

    /// Rolls a subscription back: the feed announced a URL that is subscribed already.
    private struct AlreadySubscribed: Error {
        var podcast: Podcast
    }

    /// Never a URL whose credentials were redacted: the server would get `***`.
    private static func checkSubscribable(_ url: URL) throws(FeedError) {
        guard DownloadRequest.isDownloadable(url) else {
            throw FeedError(.unsupportedScheme, "\(Redaction.redact(url)) is not an http or https URL")
        }
        guard !Redaction.hasRedactionMarker(url) else {
            throw FeedError(.invalidURL, "\(Redaction.redact(url)) has *** where its credentials were (it was printed or exported "
                                 + "without them); give the feed's real address, or export with --include-credentials and import that file")
        }
    }

    private static func namedFeedError(_ error: FeedError, feed url: URL, page: URL) -> FeedError {
        let named = "the page \(Redaction.redact(page)) names its feed \(Redaction.redact(url))"
        if error.code == .htmlPage {
            // One step, as gPodder takes: a page that names a page is not followed further.
            return FeedError(.htmlPage, "\(named), but that is a web page too, not a feed; give the feed's own address")
        }
        return FeedError(error.code, "\(named), which cannot be read: \(error.message)", line: error.line, column: error.column, httpStatus: error.httpStatus)
    }

    func podcast(withFeedURL url: URL) throws -> Podcast? {
        try PodcastRecord.find(feedURL: url, in: database)
    }

    /// The podcast and its episodes go; their files and downloads are the caller's (`EpisodeFiles.delete`, the engine's queue).
    public func unsubscribe(_ podcastID: Int) throws {
        try database.write {
            try EpisodeRecord.deleteAll(ofPodcast: podcastID, in: database)
            try PodcastRecord.delete(podcastID, in: database)
        }
    }

    /// Parses one document by URL without subscribing or following pages, with no library at all.
    /// A host that cannot be reached fails at once, without retries.
    public static func inspect(_ url: URL, manager: DownloadManager) async throws -> ParsedFeed {
        let document = try await inspected(url, manager: manager)
        return try FeedParser.parse(document.data, url: document.finalURL, mediaType: document.mediaType)
    }

    /// As ``inspect(_:manager:)``, handing the episodes to `receive` in batches as they are read
    /// (see ``FeedParser/parse(_:url:limits:mediaType:batchSize:episodes:)``): for `monsoon inspect` of a feed of any size.
    public static func inspect(_ url: URL, manager: DownloadManager, batchSize: Int = FeedParser.defaultBatchSize,
                               episodes receive: ([ParsedEpisode], ParsedFeed) throws -> Void) async throws -> ParsedFeed {
        let document = try await inspected(url, manager: manager)
        return try FeedParser.parse(document.data, url: document.finalURL, mediaType: document.mediaType, batchSize: batchSize, episodes: receive)
    }

    private static func inspected(_ url: URL, manager: DownloadManager) async throws(FeedError) -> FeedFetcher.Document {
        guard let loaded = try await FeedFetcher(manager: manager, retriesConnectionFailures: false).load(url, followPages: false) else {
            throw FeedError(.empty, "cannot fetch \(Redaction.redact(url)): \(HTTPStatusText.answered(304)) to a first request")
        }
        return loaded.first
    }
}

extension PodcastLibrary {
    /// A private feed that moves on the same host (a permanent redirect, `itunes:new-feed-url`) keeps its user and
    /// password: libcurl sent them on to the same host, but the URL it ends at carries them only when the `Location`
    /// was relative, and stored without them every later refresh would be refused.
    ///
    /// A secret in the query (`?token=…`) is not carried over: the new URL was read as the server gave it, without
    /// the old query; adding one would make up a URL the server never gave.
    static func keepingCredentials(of old: URL, in new: URL) -> URL {
        guard old.host?.lowercased() == new.host?.lowercased(), new.user == nil,
              var components = URLComponents(url: new, resolvingAgainstBaseURL: false),
              let oldComponents = URLComponents(url: old, resolvingAgainstBaseURL: false),
              oldComponents.user != nil else { return new }
        components.user = oldComponents.user
        components.password = oldComponents.password
        return components.url ?? new
    }
}
