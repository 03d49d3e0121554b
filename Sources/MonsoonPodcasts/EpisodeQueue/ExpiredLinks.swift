import FoundationEssentials
import MonsoonEngine

/// What to do about episode downloads a server refused with 401, 403 or 410: most often the signed link of a private
/// feed that expired before the episode's turn came (an archive of a large feed takes hours). Pure: the caller reads
/// the library, refreshes feeds and performs the answers.
///
/// For each failure (`take`), the episode's feed is read again, and when the episode has another enclosure URL now,
/// the download goes on from it (`DownloadManager.changeURL(_:to:)` keeps the part; the validators decide). Within a run:
/// - a feed is read at most once for each episode;
/// - one reading serves every failure of its podcast taken before it ended;
/// - a feed that, read again, changed no episode is not read again for the other failures;
/// - when no new link comes, the failure stands, with a reason that says so.
public struct ExpiredLinks: Sendable {
    /// One failed download whose link is being renewed.
    public struct Job: Sendable, Equatable {
        public var download: DownloadID
        public var episode: Int
        public var url: URL
        public var error: DownloadError
        /// The order failures were taken in: a feed read serves those taken before it ended.
        var sequence: Int
    }

    /// The next step of a job.
    ///
    /// `@nonexhaustive`: more steps may come, so a `switch` outside this package needs a `default`.
    @nonexhaustive
    public enum Action: Sendable, Equatable {
        /// Go on from this URL, the episode's link now (`DownloadManager.changeURL(_:to:)`), then `finished`.
        case changeURL(URL)
        /// Read the podcast's feed again, then `refreshed(podcast:changedEpisodes:)` (or note the
        /// failure), then `decide` again.
        case refresh(podcast: Int)
        /// No new link: the failure stands with this reason (`DownloadManager.replaceFailure`), then `finished`.
        case fail(DownloadError)
    }

    /// A feed read for renewals: the failures taken before it ended, and whether it changed any episode.
    private struct Reading {
        var servedThrough: Int
        var changedEpisodes: Bool
    }

    private var taken = 0
    /// By download and URL: each is taken once.
    private var seen: Set<String> = []
    private var readFor: Set<Int> = []
    private var renewed: Set<Int> = []
    private var readings: [Int: Reading] = [:]
    /// Once closed (the run is ending), failures are reported as they are.
    public private(set) var isClosed = false

    public init() {}

    /// 401 Unauthorized, 403 Forbidden, 410 Gone.
    public static func isRefusal(_ status: Int?) -> Bool {
        status == 401 || status == 403 || status == 410
    }

    /// The job of renewing an episode download's link when it failed on a refusal (hold the failure back from reports
    /// meanwhile); nil: report it. Each failure (download and URL) is taken once: reported again, it is reported as is.
    public mutating func take(_ download: Download) -> Job? {
        let url = download.request.url
        guard !isClosed, download.status == .failed, let error = download.lastError, Self.isRefusal(error.httpStatus),
              let episode = EpisodeQueue.episodeID(of: download.request), seen.insert(Self.key(download.id, url)).inserted else { return nil }
        taken += 1
        return Job(download: download.id, episode: episode, url: url, error: error, sequence: taken)
    }

    /// At the end of a run: a failure not yet offered to `take` is still on its way to the event reader.
    public func hasSeen(_ download: DownloadID, at url: URL) -> Bool {
        seen.contains(Self.key(download, url))
    }

    public mutating func close() {
        isClosed = true
    }

    /// - Parameters:
    ///   - podcast: nil when the episode is no longer in the library.
    ///   - refreshFailure: why reading its feed (or the library) again for this job failed, if it did.
    public mutating func decide(_ job: Job, podcast: Int?, currentURL: URL?, refreshFailure: String? = nil) -> Action {
        let retry = "run 'monsoon retry \(job.download)'"
        // A reading since (for another episode, or at the start of the run) brought another link.
        if let currentURL, currentURL != job.url, DownloadRequest.isDownloadable(currentURL) { return .changeURL(currentURL) }
        if let refreshFailure {
            return .fail(reason(job, ": the link has likely expired, and the feed could not be read again (\(refreshFailure)); \(retry) once it can be"))
        }
        guard let podcast else {
            return .fail(reason(job, ": the link has likely expired, and the episode is no longer in the library to find a new one"))
        }
        let reading = readings[podcast]
        let noNewLink = renewed.contains(job.episode)
            ? reason(job, ", also for the new link the feed gave when read again; check that the feed still gives you access, then \(retry)")
            : reason(job, ": the link has likely expired, and the feed, read again, gives no new one; check that the feed still gives you access, then \(retry)")
        // Read since this failure was taken: what it gave is all there is.
        if let reading, reading.servedThrough >= job.sequence { return .fail(noNewLink) }
        // Read already in this run without a change to any episode: this feed does not renew links.
        if let reading, !reading.changedEpisodes { return .fail(noNewLink) }
        // Once per episode: a link it gave that is refused at once is not expired, but refused.
        guard readFor.insert(job.episode).inserted else { return .fail(noNewLink) }
        return .refresh(podcast: podcast)
    }

    /// `changedEpisodes`: the reading added or changed any episode.
    public mutating func refreshed(podcast: Int, changedEpisodes: Bool) {
        readings[podcast] = Reading(servedThrough: taken, changedEpisodes: changedEpisodes)
    }

    public mutating func finished(_ job: Job, renewedTo url: URL?) {
        if url != nil { renewed.insert(job.episode) }
    }

    private func reason(_ job: Job, _ text: String) -> DownloadError {
        // The server's status stays with it: the failure is still that refusal.
        DownloadError(job.error.code, job.error.message + text, httpStatus: job.error.httpStatus)
    }

    private static func key(_ download: DownloadID, _ url: URL) -> String {
        download.rawValue + " " + url.absoluteString
    }
}
