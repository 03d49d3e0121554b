import Foundation

extension ArchiveRun {
    /// A run's feeds, read whole.
    package struct Feeds {
        /// Each podcast read, with its feed's document for the copy in its folder.
        package var loaded: [(Podcast, Data?)] = []
        /// The podcasts subscribed to before (refreshed), whose archived episodes may have new versions.
        package var refreshed = Set<Int>()
    }

    /// Subscribes to (or refreshes) each of `urls` in `library`, keeping its document for the
    /// folder's copy. A feed that cannot be read, or whose later page cannot, is reported; the
    /// others go on.
    static func readFeeds(_ urls: [URL], in library: PodcastLibrary, report: (Event) -> Void) async -> Feeds {
        library.keepsFeedDocuments = true
        var feeds = Feeds()
        for url in urls {
            do {
                let summary: RefreshSummary
                let podcast: Podcast
                switch try await library.subscribe(to: url) {
                case .subscribed(let new, let first):
                    (podcast, summary) = (new, first)
                case .alreadySubscribed(let known):
                    (podcast, summary) = (known, try await library.refresh(known.id))
                    feeds.refreshed.insert(known.id)
                }
                if summary.pageError != nil {
                    report(.pageFailed(podcast, summary))
                }
                feeds.loaded.append((try library.podcast(withID: podcast.id) ?? podcast, summary.document))
            } catch {
                report(.feedFailed(url, error))
            }
        }
        return feeds
    }
}
