import Foundation
import MonsoonEngine
import MonsoonStore

/// The user's podcasts and episodes, in SQLite beside the download queue.
///
/// - Important: like its database connection, used from one task at a time.
///   Refreshing many feeds runs their fetches and parses concurrently through the
///   one engine; only the writes come back here, one transaction per feed.
public final class PodcastLibrary {
    let database: Database
    var fetcher: FeedFetcher

    /// Keep each feed's document as fetched in `RefreshSummary.document` (the first page),
    /// for an archive's snapshot of it.
    public var keepsFeedDocuments: Bool {
        get { fetcher.keepsDocument }
        set { fetcher.keepsDocument = newValue }
    }

    /// Opens the library in `database` (creating its tables), fetching through `manager`.
    public init(database: Database, manager: DownloadManager, limits: FeedLimits = FeedLimits()) throws {
        self.database = database
        fetcher = FeedFetcher(manager: manager, limits: limits)
        try LibrarySchema.migrator.migrate(database)
    }

    // MARK: - Reading

    /// Every podcast, in the order they were subscribed to.
    public func podcasts() throws -> [Podcast] {
        try database.statement("SELECT \(Podcast.columns) FROM podcasts p ORDER BY p.id").query { Podcast($0) }
    }

    /// The podcast with `id`, or nil when there is none.
    public func podcast(withID id: Int) throws -> Podcast? {
        try database.statement("SELECT \(Podcast.columns) FROM podcasts p WHERE p.id = ?").first([id]) { Podcast($0) }
    }

    /// A podcast by id (`12`) or by a part of its title that only one title contains.
    public func findPodcast(_ query: String) throws -> Podcast {
        let text = query.trimmingCharacters(in: .whitespaces)
        if let id = Int(text), let podcast = try podcast(withID: id) { return podcast }
        let matches = try podcasts().filter { $0.name.localizedCaseInsensitiveContains(text) }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty { throw LibraryError.notFound("no podcast has id or title '\(text)'; list them with 'monsoon podcasts'") }
        let names = matches.prefix(5).map { "\($0.id) \($0.name)" }.joined(separator: ", ")
        throw LibraryError.ambiguous("'\(text)' matches \(matches.count) podcasts (\(names)); give an id or more of the title")
    }

    /// A podcast's episodes, newest first (by publication date, then feed order).
    public func episodes(of podcastID: Int) throws -> [Episode] {
        try database.statement("""
            SELECT \(Episode.columns) FROM episodes WHERE podcast_id = ? ORDER BY published IS NULL, published DESC, feed_order
            """).query([podcastID]) { Episode($0) }
    }

    /// The episode with `id`, or nil when there is none.
    public func episode(withID id: Int) throws -> Episode? {
        try database.statement("SELECT \(Episode.columns) FROM episodes WHERE id = ?").first([id]) { Episode($0) }
    }

    // MARK: - Subscribing

    /// What `subscribe(to:)` did.
    public enum SubscribeResult: Sendable, Equatable {
        /// A new subscription, with what reading its feed stored.
        case subscribed(Podcast, RefreshSummary)
        /// Already subscribed to this feed: nothing changed.
        case alreadySubscribed(Podcast)
    }

    /// Subscribes to the feed at `url`, reading its whole back catalogue (all pages).
    /// Nothing is stored unless the feed could be read.
    ///
    /// A web page that names its feed (`<link rel="alternate" type="application/rss+xml" href=…>`,
    /// or `atom+xml`) subscribes to that feed, and ``RefreshSummary/foundOnPage`` says so; only once:
    /// a page that names another page fails. A host that cannot be reached fails at once, without
    /// the retries a refresh makes: the user is waiting.
    public func subscribe(to url: URL) async throws -> SubscribeResult {
        try Self.checkSubscribable(url)
        if let existing = try podcast(withFeedURL: url) { return .alreadySubscribed(existing) }
        var fetcher = self.fetcher
        fetcher.retriesConnectionFailures = false
        var feedURL = url
        var foundOnPage: URL?
        let loaded: FeedFetcher.Loaded?
        do throws(FeedError) {
            loaded = try await fetcher.load(url, followPages: true)
        } catch {
            guard error.code == .htmlPage, let named = error.alternateFeedURL else { throw error }
            try Self.checkSubscribable(named)
            if let existing = try podcast(withFeedURL: named) { return .alreadySubscribed(existing) }
            loaded = try await Self.loadNamedFeed(named, page: url, fetcher: fetcher)
            feedURL = named
            foundOnPage = url
        }
        guard let loaded else {
            throw FeedError.make(.empty, "\(Redaction.redact(feedURL)) answered 304 Not Modified to a first request")
        }
        let finalURL = loaded.first.movedPermanently ? loaded.first.finalURL : feedURL
        if finalURL != feedURL, let existing = try podcast(withFeedURL: finalURL) { return .alreadySubscribed(existing) }
        // An old URL whose feed announces a URL already subscribed is the same podcast.
        if let announced = loaded.feed.newFeedURL, let existing = try podcast(withFeedURL: announced) { return .alreadySubscribed(existing) }
        // The row and its episodes in one transaction: a failure leaves nothing behind.
        var summary: RefreshSummary = try database.write {
            try database.run("""
                INSERT INTO podcasts (feed_url, etag, last_modified, last_refresh, added) VALUES (?, ?, ?, ?, ?)
                """, finalURL.absoluteString, loaded.first.etag, loaded.first.lastModified, Date(), Date())
            return try store(loaded, podcastID: database.lastInsertRowID, feedURL: finalURL)
        }
        let id = summary.podcastID
        summary.movedTo = finalURL != feedURL ? finalURL : summary.movedTo
        summary.foundOnPage = foundOnPage
        guard let podcast = try podcast(withID: id) else { throw LibraryError.notFound("the new podcast vanished") }
        return .subscribed(podcast, summary)
    }

    /// Only http and https feeds can be subscribed to, and never a URL whose credentials were
    /// redacted (the server would get `***`).
    private static func checkSubscribable(_ url: URL) throws(FeedError) {
        guard DownloadRequest.isDownloadable(url) else {
            throw FeedError.make(.unsupportedScheme, "\(Redaction.redact(url)) is not an http or https URL")
        }
        guard !Redaction.hasRedactionMarker(url) else {
            throw FeedError.make(.invalidURL, "\(Redaction.redact(url)) has *** where its credentials were (it was printed or exported "
                                 + "without them); give the feed's real address, or export with --include-credentials and import that file")
        }
    }

    /// The feed a web page named; its errors say which page named it.
    private static func loadNamedFeed(_ url: URL, page: URL, fetcher: FeedFetcher) async throws(FeedError) -> FeedFetcher.Loaded? {
        let named = "the page \(Redaction.redact(page)) names its feed \(Redaction.redact(url))"
        do throws(FeedError) {
            return try await fetcher.load(url, followPages: true)
        } catch where error.code == .htmlPage {
            // One step, as gPodder takes: a page that names a page is not followed further.
            throw FeedError(.htmlPage, "\(named), but that is a web page too, not a feed; give the feed's own address")
        } catch {
            throw FeedError(error.code, "\(named), which cannot be read: \(error.message)", line: error.line, column: error.column, httpStatus: error.httpStatus)
        }
    }

    func podcast(withFeedURL url: URL) throws -> Podcast? {
        try database.statement("SELECT \(Podcast.columns) FROM podcasts p WHERE p.feed_url = ?").first([url.absoluteString]) { Podcast($0) }
    }

    /// Unsubscribes: the podcast and its episodes go (their files and downloads are the
    /// caller's: see `EpisodeFiles.delete` and the engine's queue).
    public func unsubscribe(_ podcastID: Int) throws {
        try database.write {
            try database.run("DELETE FROM episodes WHERE podcast_id = ?", podcastID)
            try database.run("DELETE FROM podcasts WHERE id = ?", podcastID)
        }
    }

    /// Parses one document by URL without subscribing (pages are not followed), with
    /// no library at all: nothing is opened or written. A host that cannot be reached
    /// fails at once, without retries.
    public static func inspect(_ url: URL, manager: DownloadManager) async throws -> ParsedFeed {
        guard let loaded = try await FeedFetcher(manager: manager, retriesConnectionFailures: false).load(url, followPages: false) else {
            throw FeedError.make(.empty, "\(Redaction.redact(url)) answered 304 Not Modified")
        }
        return loaded.feed
    }

    // MARK: - Refreshing

    /// Refreshes one podcast: adds new episodes, updates changed metadata of known
    /// ones (never the user's state), follows pages, and records a moved feed.
    public func refresh(_ podcastID: Int) async throws -> RefreshSummary {
        guard let podcast = try podcast(withID: podcastID) else { throw LibraryError.notFound("no podcast has id \(podcastID)") }
        let fetcher = self.fetcher
        let result = await Self.load(podcast, fetcher: fetcher)
        return try record(result, for: podcast)
    }

    /// Refreshes every podcast, fetching and parsing concurrently through the one
    /// engine; the results are written one feed at a time.
    public func refreshAll() async throws -> [(Podcast, Result<RefreshSummary, Error>)] {
        let podcasts = try podcasts()
        let fetcher = self.fetcher
        var results: [(Int, Podcast, Result<RefreshSummary, Error>)] = []
        await withTaskGroup(of: (Int, Result<FeedFetcher.Loaded?, FeedError>).self) { group in
            for (index, podcast) in podcasts.enumerated() {
                group.addTask { (index, await Self.load(podcast, fetcher: fetcher)) }
            }
            // Each feed is written as soon as it is in: nothing waits for the slowest one.
            for await (index, result) in group {
                let podcast = podcasts[index]
                results.append((index, podcast, Result { try record(result, for: podcast) }))
            }
        }
        return results.sorted { $0.0 < $1.0 }.map { ($0.1, $0.2) }
    }

    private static func load(_ podcast: Podcast, fetcher: FeedFetcher) async -> Result<FeedFetcher.Loaded?, FeedError> {
        do {
            return .success(try await fetcher.load(podcast.feedURL, etag: podcast.etag, lastModified: podcast.lastModified, followPages: true))
        } catch {
            return .failure(error)
        }
    }

    /// Writes a refresh's outcome: the error on failure (nothing else changes), or the episodes.
    private func record(_ result: Result<FeedFetcher.Loaded?, FeedError>, for podcast: Podcast) throws -> RefreshSummary {
        switch result {
        case .failure(let error):
            try database.run("UPDATE podcasts SET last_error = ? WHERE id = ?", Redaction.redactText(error.message), podcast.id)
            throw error
        case .success(nil):
            try database.run("UPDATE podcasts SET last_refresh = ?, last_error = NULL WHERE id = ?", Date(), podcast.id)
            return RefreshSummary(podcastID: podcast.id, unchanged: true)
        case .success(let loaded?):
            return try apply(loaded, to: podcast)
        }
    }

    /// Stores a loaded feed: metadata, new and changed episodes, validators, and a
    /// new feed URL (permanent redirect, or `itunes:new-feed-url`). One transaction.
    func apply(_ loaded: FeedFetcher.Loaded, to podcast: Podcast) throws -> RefreshSummary {
        try database.write { try store(loaded, podcastID: podcast.id, feedURL: podcast.feedURL) }
    }

    /// The body of `apply`, inside the caller's transaction. A feed without a title is named after
    /// `feedURL` (the podcast's), so nothing lists as blank.
    private func store(_ loaded: FeedFetcher.Loaded, podcastID: Int, feedURL: URL) throws -> RefreshSummary {
        let feed = loaded.feed
        var summary = RefreshSummary(podcastID: podcastID, duplicates: feed.duplicateCount, pages: loaded.pages, pageError: loaded.pageError)
        if !loaded.first.data.isEmpty { summary.document = loaded.first.data }
        // After a page failed, the validators are not kept: a conditional refresh of the unchanged
        // first page would be answered 304 and never try the failed page again.
        let complete = loaded.pageError == nil
        do {
            // A feed that lost its title or author keeps the ones it had.
            try database.run("""
                UPDATE podcasts SET title = coalesce(?2, title, ?12), author = coalesce(?3, author), description = coalesce(?4, description),
                    link = coalesce(?5, link), artwork_url = coalesce(?6, artwork_url), language = coalesce(?7, language),
                    podcast_guid = coalesce(?8, podcast_guid), etag = ?9, last_modified = ?10, last_refresh = ?11, last_error = ?13 WHERE id = ?1
                """, podcastID, feed.title, feed.author, feed.description, feed.link?.absoluteString, feed.artworkURL?.absoluteString,
                feed.language, feed.podcastGUID, complete ? loaded.first.etag : nil, complete ? loaded.first.lastModified : nil, Date(),
                FallbackName.podcast(feedURL: feedURL), loaded.pageError.map { Redaction.redactText($0.message) })
            // Keyed by the identity's bytes: SQLite compares bytes, Swift strings compare
            // canonical equivalents, and the two must agree.
            var known: KnownEpisodes = [:]
            for row in try database.statement("SELECT identity, feed_order, \(EpisodeMetadata.columns) FROM episodes WHERE podcast_id = ?").query([podcastID], {
                (Array(($0.text(0) ?? "").utf8), $0.int(1), EpisodeMetadata($0, offset: 2))
            }) {
                known[row.0] = (row.2, row.1)
            }
            let insert = try database.statement("""
                INSERT INTO episodes (podcast_id, identity, feed_order, \(EpisodeMetadata.columns))
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
                """)
            let update = try database.statement("""
                UPDATE episodes SET feed_order = ?3, guid = ?4, title = ?5, enclosure_url = ?6, media_type = ?7, declared_length = ?8,
                    published = ?9, duration = ?10, season = ?11, episode = ?12, summary = ?13, link = ?14, image_url = ?15,
                    transcript_url = ?16, chapters_url = ?17
                WHERE podcast_id = ?1 AND identity = ?2
                """)
            let identities = Self.storedIdentities(of: feed.episodes, known: known)
            for (order, episode) in feed.episodes.enumerated() {
                let metadata = EpisodeMetadata(episode)
                let identity = identities[order]
                let key = Array(identity.utf8)
                let values: [SQLValueConvertible] = [podcastID, identity, order] + metadata.values
                if let old = known[key] {
                    guard old.metadata != metadata || old.order != order else { continue }
                    try update.bind(values)
                    while try update.step() {}
                    if old.metadata != metadata { summary.updated += 1 }
                } else {
                    try insert.bind(values)
                    while try insert.step() {}
                    known[key] = (metadata, order)
                    summary.added += 1
                }
            }
            try update.bind([])
            try insert.bind([])
            summary.movedTo = try move(podcastID, loaded: loaded)
        }
        return summary
    }

    /// A permanent redirect or `itunes:new-feed-url` moves the subscription, unless
    /// the new URL is not http(s) or another subscription already has it.
    private func move(_ podcastID: Int, loaded: FeedFetcher.Loaded) throws -> URL? {
        guard let current = try podcast(withID: podcastID) else { return nil }
        // A redirect that was followed wins over an announcement that was not fetched.
        var target: URL?
        if loaded.first.movedPermanently {
            target = loaded.first.finalURL
        } else if let announced = loaded.feed.newFeedURL, DownloadRequest.isDownloadable(announced),
                  announced != loaded.first.finalURL {
            target = Self.keepingCredentials(of: current.feedURL, in: announced)
        }
        guard let target, target != current.feedURL, try podcast(withFeedURL: target) == nil else { return nil }
        try database.run("UPDATE podcasts SET feed_url = ?, etag = NULL, last_modified = NULL WHERE id = ?", target.absoluteString, podcastID)
        return target
    }
}

extension PodcastLibrary {
    /// A private feed that moves on the same host keeps its user and password.
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

/// The feed's side of an episode: what a refresh may change.
struct EpisodeMetadata: Equatable {
    static let columns = """
        guid, title, enclosure_url, media_type, declared_length, published, duration, season, episode, summary, link, image_url, transcript_url, chapters_url
        """

    var values: [SQLValueConvertible]
    private var key: [String?]

    var guid: String? { key[0] }
    var enclosureURL: String? { key[2] }

    init(_ episode: ParsedEpisode) {
        values = [episode.guid, episode.title, episode.enclosureURL?.absoluteString, episode.mediaType, episode.declaredLength,
                  episode.published, episode.duration, episode.season, episode.episodeNumber, episode.summary,
                  episode.link?.absoluteString, episode.imageURL?.absoluteString, episode.transcriptURL?.absoluteString,
                  episode.chaptersURL?.absoluteString]
        key = values.map(Self.text)
    }

    init(_ row: Row, offset: Int32) {
        var values: [SQLValueConvertible] = []
        for index in 0..<Int32(14) {
            let column = offset + index
            if row.isNull(column) { values.append(SQLValue.null) } else if index == 5 { values.append(row.double(column)) } else if [4, 6, 7, 8].contains(index) {
                values.append(row.int(column))
            } else {
                values.append(row.text(column) ?? "")
            }
        }
        self.values = values
        key = values.map(Self.text)
    }

    private static func text(_ value: SQLValueConvertible) -> String? {
        switch value.sqlValue {
        case .null: return nil
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .text(let text): return text
        case .blob(let data): return data.base64EncodedString()
        }
    }

    static func == (lhs: EpisodeMetadata, rhs: EpisodeMetadata) -> Bool { lhs.key == rhs.key }
}

/// Why a library operation was refused.
public enum LibraryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing fits what was asked (no such podcast or episode, not in the queue, no media file); the message says which.
    case notFound(String)
    /// More than one podcast's title matched; the message names up to five, with their ids.
    case ambiguous(String)

    /// The message.
    public var description: String {
        switch self {
        case .notFound(let message), .ambiguous(let message): return message
        }
    }
}
