import Foundation
import MonsoonEngine

/// Fetches feed documents through the engine's in-memory fetch: gzip, conditional
/// GET, a size cap and timeouts, the engine's retry policy and safety rules
/// (http and https only, also on redirects).
struct FeedFetcher: Sendable {
    let manager: DownloadManager
    var limits = FeedLimits()
    var timeout: Double = 60
    var userAgent = "Monsoon/0.1 (podcast archiver)"
    /// Retry a host that cannot be reached; false for a fetch the user waits for (subscribing,
    /// inspecting), which then fails at once with the reason.
    var retriesConnectionFailures = true
    /// Keep the first page's bytes in `Loaded.first.data` (for an archive's feed snapshot).
    var keepsDocument = false

    /// One fetched document.
    struct Document: Sendable {
        var data: Data
        var finalURL: URL
        /// Every redirect was 301 or 308: the feed has moved for good.
        var movedPermanently: Bool
        var etag: String?
        var lastModified: String?
        /// The `Content-Type`, for saying what a document that is not a feed is.
        var mediaType: String?
    }

    enum Outcome: Sendable {
        case notModified
        case document(Document)
    }

    /// Fetches `url`; with validators, a 304 answer is `.notModified`. `page` numbers a later page
    /// of a paged feed, for messages.
    func fetch(_ url: URL, etag: String? = nil, lastModified: String? = nil, page: Int? = nil) async throws(FeedError) -> Outcome {
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw FeedError.make(.unsupportedScheme, "\(Redaction.redact(url)) is not an http or https URL")
        }
        guard url.host?.isEmpty == false else {
            throw FeedError.make(.invalidURL, "\(Redaction.redact(url)) is not a URL with a host")
        }
        var headers = ["User-Agent": userAgent, "Accept": "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8"]
        if let etag { headers["If-None-Match"] = etag }
        if let lastModified { headers["If-Modified-Since"] = lastModified }
        let what = Self.name(of: url, page: page)
        let response: FetchResponse
        do {
            response = try await manager.fetch(FetchRequest(url: url, headers: headers, maxBytes: limits.maxBytes, timeout: timeout,
                                                            retriesConnectionFailures: retriesConnectionFailures))
        } catch {
            switch error.code {
            case .tooLarge:
                throw FeedError.make(.tooLarge, "\(page == nil ? "the feed at " : "")\(what) is larger than \(ByteCount.format(limits.maxBytes)); refused")
            case .unsupportedScheme:
                throw FeedError.make(.unsupportedScheme, "\(what) redirected to a scheme other than http or https; refused")
            default:
                throw FeedError.make(.network, "cannot fetch \(what): \(error.message)")
            }
        }
        if response.status == 304 { return .notModified }
        guard (200...299).contains(response.status) else {
            var error = FeedError.make(.httpStatus, "fetching \(what) failed: the server answered \(response.status)")
            error.httpStatus = response.status
            throw error
        }
        return .document(Document(data: response.body, finalURL: response.finalURL, movedPermanently: response.isPermanentlyRedirected,
                                  etag: response.header("ETag"), lastModified: response.header("Last-Modified"), mediaType: response.header("Content-Type")))
    }

    /// The URL for messages, redacted; a later page as "page 3 of the feed (URL)".
    private static func name(of url: URL, page: Int?) -> String {
        page.map { "page \($0) of the feed (\(Redaction.redact(url)))" } ?? Redaction.redact(url)
    }

    /// Fetches and parses a feed and, when `followPages`, its further pages
    /// (`atom:link rel="next"`), up to `maxPages`, stopping at a page seen before.
    ///
    /// A later page that cannot be read ends the walk: the episodes of the pages before it are
    /// kept, and ``Loaded/pageError`` says which page failed and why.
    func load(_ url: URL, etag: String? = nil, lastModified: String? = nil, followPages: Bool, maxPages: Int = 100) async throws(FeedError) -> Loaded? {
        guard case .document(var first) = try await fetch(url, etag: etag, lastModified: lastModified) else { return nil }
        var feed = try FeedParser.parse(first.data, url: first.finalURL, limits: limits, mediaType: first.mediaType)
        if !keepsDocument { first.data = Data() }   // parsed: the bytes are not kept
        var loaded = Loaded(feed: feed, first: first, pages: 1)
        guard followPages, feed.nextPageURL != nil else { return loaded }
        var seen: Set<String> = [url.absoluteString, first.finalURL.absoluteString]
        // The same rules across pages as within one: a re-used guid with another enclosure is kept.
        var identities = EpisodeIdentity.Registry()
        for episode in feed.episodes { _ = identities.admit(episode.identity, guid: episode.guid, enclosureURL: episode.enclosureURL) }
        // Older pages, over http(s) only (a feed must not point Monsoon at local files). A page
        // that brings nothing new ends the walk.
        while let next = feed.nextPageURL, loaded.pages < maxPages, DownloadRequest.isDownloadable(next),
              seen.insert(next.absoluteString).inserted {
            let number = loaded.pages + 1
            do throws(FeedError) {
                guard case .document(let page) = try await fetch(next, page: number) else { break }
                do throws(FeedError) {
                    feed = try FeedParser.parse(page.data, url: page.finalURL, limits: limits, mediaType: page.mediaType)
                } catch {
                    throw FeedError(error.code, "\(Self.name(of: next, page: number)) is not a readable feed: \(error.message)",
                                    line: error.line, column: error.column)
                }
            } catch {
                loaded.pageError = error
                break
            }
            let before = loaded.feed.episodes.count
            loaded.feed.duplicateCount += feed.duplicateCount
            for episode in feed.episodes {
                guard let identity = identities.admit(episode.identity, guid: episode.guid, enclosureURL: episode.enclosureURL) else {
                    loaded.feed.duplicateCount += 1
                    continue
                }
                var kept = episode
                kept.identity = identity
                loaded.feed.episodes.append(kept)
            }
            loaded.pages += 1
            if loaded.feed.episodes.count == before { break }
        }
        return loaded
    }

    struct Loaded: Sendable {
        /// The first page's feed, with every page's episodes.
        var feed: ParsedFeed
        var first: Document
        var pages: Int
        /// Why a later page could not be read (its message names the page); the episodes of the
        /// pages before it are kept.
        var pageError: FeedError?
    }
}

extension FeedError {
    /// An error of the fetching layer.
    public static func make(_ code: Code, _ message: String) -> FeedError {
        FeedError(code, message)
    }
}
