import Foundation
import MonsoonEngine

extension EpisodeFiles {
    /// Where to fetch a manifest entry's file again. The library's own URL comes first: the
    /// manifest's are redacted (a private feed's token is `***` there). An episode is found by its
    /// file (an earlier version's file by its version's enclosure), else by its guid in the podcast whose (redacted) feed URL the manifest names; the feed
    /// copy is the podcast's feed. Else the manifest's source URL, when nothing was taken out of it.
    public func repairSource(of entry: Manifest.Entry, at path: String, feedURL: String) throws -> Result<URL, EpisodeFileError> {
        let podcasts = try database.statement("SELECT id, feed_url FROM podcasts").query { ($0.int(0), $0.text(1) ?? "") }
            .filter { Redaction.redact($0.1) == feedURL }
        var known: String?
        switch entry.kind {
        case "episode":
            // An earlier version (`EpisodeVersion`) is fetched from its own enclosure, never the episode's newest.
            known = try database.scalarText("SELECT url FROM episode_versions WHERE file_name = ? AND url IS NOT NULL ORDER BY id DESC LIMIT 1", path)
            if known == nil { known = try database.scalarText("SELECT enclosure_url FROM episodes WHERE file_name = ?", path) }
            if known == nil, let guid = entry.guid {
                for (podcast, _) in podcasts where known == nil {
                    known = try database.scalarText("SELECT enclosure_url FROM episodes WHERE podcast_id = ? AND guid = ?", podcast, guid)
                }
            }
        case "feed":
            known = podcasts.first?.1
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
