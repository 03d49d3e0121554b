import FoundationEssentials

extension DownloadManager {
    /// Gives a download a new URL for the same resource, keeping its part: a private feed's
    /// signed link that expired, renewed by reading the feed again, say.
    ///
    /// The caller vouches that both URLs name one resource; the server decides whether the
    /// bytes are kept. The next attempt asks the new URL for the rest with `Range` and
    /// `If-Range` (the part's validators): a 206 whose validators match is appended, and a 200,
    /// a 206 of another version or from another offset starts the part over, as for any resume.
    /// The part's extended attribute names the new URL from then on.
    ///
    /// A failed download is queued again with fresh retry counters; a running one stops (its
    /// part kept) and is queued again; a queued, waiting or paused one keeps its status and uses
    /// the new URL at its next attempt; a completed one only when fetched again.
    ///
    /// - Throws: `.notFound`; `.invalidRequest` for a URL that is not http or https.
    public func changeURL(_ id: DownloadID, to url: URL) async throws(DownloadManagerError) {
        try await perform(rows: [id], now: { $0.changeURL(id, to: url) })
    }

    /// Gives a failed download a better reason than the one it failed with, for a caller that
    /// knows more than the server said (that a link expired, and why no new one was to be had).
    /// Listeners get a `.statusChanged` with the new `lastError` (the status stays `.failed`).
    ///
    /// - Throws: `.notFound`; `.invalidRequest` when the download is not failed (resumed or
    ///   retried meanwhile).
    public func replaceFailure(of id: DownloadID, with error: DownloadError) async throws(DownloadManagerError) {
        try await perform(rows: [id], now: { $0.replaceFailure(of: id, with: error) })
    }
}
