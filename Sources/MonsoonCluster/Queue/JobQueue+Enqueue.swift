import FoundationEssentials

/// A job to add to the shared queue, with everything its worker needs: a claim reads nothing else.
public struct NewJob: Sendable, Hashable {
    public var kind: ClaimedJob.Kind
    /// What makes the job unique: one job per key, however many processes add it at once
    /// (`refresh:<feed id>`, `episode:<episode id>`).
    public var key: String
    public var feedID: Int64?
    /// The episode whose file a download is: the ledger's key for it.
    public var episodeID: Int64?
    /// The host of its URL, for politeness: ``host(of:)``.
    public var host: String
    /// Lower runs first.
    public var priority: Int
    /// What it fetches: the feed (refresh) or the episode's enclosure (download).
    public var url: String?
    /// The feed's URL, of either kind: whether its requests may reach private addresses.
    public var feedURL: String?
    /// Where the file goes, relative to the workers' folder, without its extension (download).
    public var path: String?
    /// The most bytes the file may have: the feed's `--max-size` (download).
    public var maxBytes: Int64?
    /// The length the feed declares for the enclosure (download).
    public var expectedLength: Int64?

    public init(kind: ClaimedJob.Kind, key: String, feedID: Int64? = nil, episodeID: Int64? = nil, host: String, priority: Int = 0,
                url: String? = nil, feedURL: String? = nil, path: String? = nil, maxBytes: Int64? = nil, expectedLength: Int64? = nil) {
        self.kind = kind
        self.key = key
        self.feedID = feedID
        self.episodeID = episodeID
        self.host = host
        self.priority = priority
        self.url = url
        self.feedURL = feedURL
        self.path = path
        self.maxBytes = maxBytes
        self.expectedLength = expectedLength
    }

    /// The refresh of a feed, whose URL is `url`: before any download of its host.
    public static func refresh(feedID: Int64, url: URL) -> NewJob {
        NewJob(kind: .refresh, key: "refresh:\(feedID)", feedID: feedID, host: host(of: url), priority: refreshPriority,
               url: url.absoluteString, feedURL: url.absoluteString)
    }

    /// The download of an episode's file from its enclosure `url` to `path` (relative to the
    /// workers' folder, without its extension).
    public static func download(episodeID: Int64, feedID: Int64, url: URL, feedURL: URL, path: String, expectedLength: Int64?, maxBytes: Int64?,
                                priority: Int) -> NewJob {
        NewJob(kind: .download, key: "episode:\(episodeID)", feedID: feedID, episodeID: episodeID, host: host(of: url), priority: priority,
               url: url.absoluteString, feedURL: feedURL.absoluteString, path: path, maxBytes: maxBytes, expectedLength: expectedLength)
    }

    /// The priority of refreshes: the lowest there is, so a feed is read before the downloads
    /// queued on its host (a refresh is one small request that may queue many).
    public static let refreshPriority = Int(Int32.min)

    /// The politeness host of a job's URL (`ClusterHost.key`); every job is enqueued with it.
    public static func host(of url: URL) -> String {
        ClusterHost.key(of: url) ?? ""
    }
}

extension JobQueue {
    /// Adds jobs, skipping those whose key is queued already (`ON CONFLICT DO NOTHING`: no error,
    /// no transaction undone), and wakes the workers with one notification if any was added.
    ///
    /// - Parameter rearmingFinished: a job whose key is there already and that finished
    ///   (completed, failed or dead) is made available again at once, its attempts and error
    ///   reset: a feed's refresh, asked for again. One waiting or running is left as it is.
    /// - Returns: how many were added (or re-armed).
    @discardableResult
    public static func enqueue(_ jobs: [NewJob], on connection: PostgresConnection, rearmingFinished: Bool = false) throws(PostgresError) -> Int {
        try queue(jobs, on: connection, rearmingFinished: rearmingFinished).count
    }

    /// `enqueue`, returning the keys of the jobs added or re-armed.
    static func queue(_ jobs: [NewJob], on connection: PostgresConnection, rearmingFinished: Bool) throws(PostgresError) -> Set<String> {
        // A statement may update a row once: each key once, the first job given for it.
        var seen = Set<String>()
        let jobs = jobs.filter { seen.insert($0.key).inserted }
        guard !jobs.isEmpty else { return [] }
        // A job made available again takes the arguments given now.
        let conflict = rearmingFinished ? """
            ON CONFLICT (key) DO UPDATE SET state = 'available', run_at = now(), attempts = 0, crashes = 0, last_error = NULL, finished_at = NULL,
                url = excluded.url, feed_url = excluded.feed_url, path = excluded.path, max_bytes = excluded.max_bytes,
                expected_length = excluded.expected_length
            WHERE monsoon_jobs.state IN ('completed', 'failed', 'dead')
            """ : "ON CONFLICT (key) DO NOTHING"
        return try connection.transaction { () throws(PostgresError) -> Set<String> in
            let rows = try connection.execute("""
                INSERT INTO monsoon_jobs (kind, key, feed_id, episode_id, host, priority, url, feed_url, path, max_bytes, expected_length)
                SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::integer[], $7::text[], $8::text[],
                                     $9::text[], $10::bigint[], $11::bigint[])
                ORDER BY 2
                \(conflict)
                RETURNING key
                """, [PostgresArray(jobs.map { Optional($0.kind.rawValue) }), PostgresArray(jobs.map { Optional($0.key) }),
                      PostgresArray(jobs.map { $0.feedID.map(String.init) }), PostgresArray(jobs.map { $0.episodeID.map(String.init) }),
                      PostgresArray(jobs.map { Optional($0.host) }), PostgresArray(jobs.map { Optional(String($0.priority)) }),
                      PostgresArray(jobs.map(\.url)), PostgresArray(jobs.map(\.feedURL)), PostgresArray(jobs.map(\.path)),
                      PostgresArray(jobs.map { $0.maxBytes.map(String.init) }), PostgresArray(jobs.map { $0.expectedLength.map(String.init) })])
            var keys = Set<String>()
            for row in rows.rows { if let key = try row.string("key") { keys.insert(key) } }
            // Delivered at commit, once however many rows: NOTIFY serializes committing
            // transactions, so one per transaction, never one per job.
            if !keys.isEmpty { try connection.execute("SELECT pg_notify($1, '')", [channel]) }
            return keys
        }
    }
}

extension JobQueue {
    /// The lowest and highest priorities of the feed's download jobs still in the queue (nil:
    /// none): a refresh queues the feed's new downloads before or after them.
    public static func downloadPriorities(ofFeed feed: Int64, on connection: PostgresConnection) throws(PostgresError) -> (lowest: Int, highest: Int)? {
        let row = try connection.execute("""
            SELECT min(priority) AS lowest, max(priority) AS highest FROM monsoon_jobs WHERE feed_id = $1 AND kind = 'download'
            """, [feed]).first
        guard let lowest = try row?.int("lowest"), let highest = try row?.int("highest") else { return nil }
        return (lowest, highest)
    }

    /// Gives the feeds' waiting downloads a new size cap (their feeds' new `--max-size`; nil:
    /// none), which their claims hand to the workers. A download running now keeps the cap it
    /// was claimed with: its row is its worker's to write, and waiting for it here could deadlock
    /// with the worker's own writes.
    /// - Returns: how many jobs changed.
    @discardableResult
    public static func setMaxBytes(_ maxBytes: Int64?, ofFeeds feeds: [Int64], on connection: PostgresConnection) throws(PostgresError) -> Int {
        guard !feeds.isEmpty else { return 0 }
        return try connection.execute("""
            UPDATE monsoon_jobs SET max_bytes = $2
            WHERE feed_id = ANY($1::bigint[]) AND kind = 'download' AND state IN ('available', 'scheduled', 'paused') AND max_bytes IS DISTINCT FROM $2
            """, [PostgresArray(feeds), maxBytes]).affectedRows
    }
}
