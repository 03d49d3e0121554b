import FoundationEssentials
import MonsoonEngine

extension EpisodeFiles {
    /// The library's own URL comes first: the manifest's are redacted (a private feed's token is `***` there). An episode
    /// is found by its file (an earlier version by its enclosure), else by its guid in the podcast whose redacted feed URL
    /// the manifest names; the feed copy is the podcast's feed. Else the manifest's source URL, if nothing was redacted.
    public func repairSource(of entry: Manifest.Entry, at path: String, feedURL: String) throws -> Result<URL, EpisodeFileError> {
        let podcasts = try PodcastRecord.feeds(in: database).filter { Redaction.redact($0.feedURL ?? "") == feedURL }
        var known: String?
        switch entry.kind {
        case "episode":
            // An earlier version (`EpisodeVersion`) is fetched from its own enclosure, never the episode's newest.
            known = try EpisodeVersion.url(ofFile: path, in: database)
                ?? EpisodeRecord.enclosure(ofFile: path, orGUID: entry.guid, in: podcasts.map(\.id), database: database)
        case "feed":
            known = podcasts.first?.feedURL
        case "info":
            // Not a download: Monsoon writes it, from the library. A redacted feed URL (`***`) cannot be run as given.
            let feed = feedURL.contains("***") ? "FEED_URL" : feedURL
            return .failure(EpisodeFileError(.noSource, "it is the metadata --write-info-json writes beside an episode, not a download: delete it if it is "
                                             + "there, then 'monsoon archive \(feed) -o FOLDER --write-info-json' (the archive's folder) writes it again"))
        default:
            break
        }
        if let known, let url = URL(string: known), DownloadRequest.isDownloadable(url) { return .success(url) }
        guard let listed = entry.sourceURL, let url = URL(string: listed), DownloadRequest.isDownloadable(url) else {
            return .failure(EpisodeFileError(.noSource, "the manifest gives no http or https URL for it, and the library does not know it: put it back from a copy of your own"))
        }
        guard !Redaction.hasRedactionMarker(url) else {
            return .failure(EpisodeFileError(.noSource, "its URL's credentials are not in the manifest (*** stands there), and the library no longer knows it: "
                                             + "subscribe to the feed again ('monsoon add FEED_URL'), then repair"))
        }
        return .success(url)
    }
}
