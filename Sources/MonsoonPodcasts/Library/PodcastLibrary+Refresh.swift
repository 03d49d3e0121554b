import FoundationEssentials
import MonsoonStore

extension PodcastLibrary {
    /// Adds new episodes, updates changed metadata of known ones (never the user's state), follows pages, and records a
    /// moved feed. Not `conditional`: the whole document is asked for, as for an archive folder that lacks its copy.
    public func refresh(_ podcastID: Int, conditional: Bool = true) async throws -> RefreshSummary {
        guard var podcast = try await onDatabase({ try podcast(withID: podcastID) }) else { throw LibraryError(.notFound, "no podcast has id \(podcastID)") }
        if !conditional { (podcast.etag, podcast.lastModified) = (nil, nil) }
        let fetcher = self.fetcher
        let result = await Self.load(podcast, fetcher: fetcher)
        return try await record(result, for: podcast)
    }

    /// Fetches concurrently through the one engine; each feed is parsed into the library as soon as it is in.
    public func refreshAll() async throws -> [(Podcast, Result<RefreshSummary, Error>)] {
        let podcasts = try await onDatabase { try self.podcasts() }
        let fetcher = self.fetcher
        var results: [(Int, Podcast, Result<RefreshSummary, Error>)] = []
        await withTaskGroup(of: (Int, Result<FeedFetcher.Loaded?, FeedError>).self) { group in
            for (index, podcast) in podcasts.enumerated() {
                group.addTask { (index, await Self.load(podcast, fetcher: fetcher)) }
            }
            for await (index, result) in group {
                let podcast = podcasts[index]
                do {
                    results.append((index, podcast, .success(try await record(result, for: podcast))))
                } catch {
                    results.append((index, podcast, .failure(error)))
                }
            }
        }
        // Ctrl-C: the feeds cut short are no one's failure; the caller is told it was cancelled.
        try Task.checkCancellation()
        return results.sorted { $0.0 < $1.0 }.map { ($0.1, $0.2) }
    }

    private static func load(_ podcast: Podcast, fetcher: FeedFetcher) async -> Result<FeedFetcher.Loaded?, FeedError> {
        do {
            return .success(try await fetcher.load(podcast.feedURL, etag: podcast.etag, lastModified: podcast.lastModified, followPages: true))
        } catch {
            return .failure(error)
        }
    }

    /// The error on failure (nothing else changes), or the feed.
    private func record(_ result: Result<FeedFetcher.Loaded?, FeedError>, for podcast: Podcast) async throws -> RefreshSummary {
        switch result {
        case .failure(let error):
            try await recordFailure(error, of: podcast)
        case .success(nil):
            try await onDatabase { try PodcastRecord.refreshedUnchanged(podcast.id, in: database) }
            return RefreshSummary(podcastID: podcast.id, unchanged: true)
        case .success(var loaded?):
            while true {
                do {
                    return try await onDatabase { [loaded] in try apply(loaded, to: podcast) }
                } catch is NeedsWalk {
                    do throws(FeedError) {
                        try await fetcher.walk(&loaded, from: podcast.feedURL)
                    } catch {
                        try await recordFailure(error, of: podcast)
                    }
                } catch let error as FeedError {
                    // The feed could not be parsed: its transaction was rolled back, nothing changed.
                    try await recordFailure(error, of: podcast)
                }
            }
        }
    }

    private func recordFailure(_ error: FeedError, of podcast: Podcast) async throws -> Never {
        // A fetch cut short by Ctrl-C says nothing about the feed: the podcast keeps its last error.
        if Task.isCancelled { throw CancellationError() }
        try await onDatabase { try PodcastRecord.setLastError(Redaction.redactText(error.message), of: podcast.id, in: database) }
        throw error
    }

    /// In one transaction.
    func apply(_ loaded: FeedFetcher.Loaded, to podcast: Podcast) throws -> RefreshSummary {
        try database.write { try store(loaded, podcastID: podcast.id, feedURL: podcast.feedURL, subscribing: false).summary }
    }
}
