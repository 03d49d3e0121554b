import Foundation

/// A job to add to the shared queue.
public struct NewJob: Sendable, Hashable {
    public var kind: ClaimedJob.Kind
    /// What makes the job unique: one job per key, however many processes add it at once
    /// (`refresh:<feed id>`, `episode:<episode id>`).
    public var key: String
    public var feedID: Int64?
    public var episodeID: Int64?
    /// The host of its URL, for politeness: ``host(of:)``.
    public var host: String
    /// Lower runs first.
    public var priority: Int

    public init(kind: ClaimedJob.Kind, key: String, feedID: Int64? = nil, episodeID: Int64? = nil, host: String, priority: Int = 0) {
        self.kind = kind
        self.key = key
        self.feedID = feedID
        self.episodeID = episodeID
        self.host = host
        self.priority = priority
    }

    /// The refresh of a feed, whose URL is `url`: before any download of its host.
    public static func refresh(feedID: Int64, url: URL) -> NewJob {
        NewJob(kind: .refresh, key: "refresh:\(feedID)", feedID: feedID, host: host(of: url), priority: refreshPriority)
    }

    /// The download of an episode's file from its enclosure `url`.
    public static func download(episodeID: Int64, feedID: Int64, url: URL, priority: Int) -> NewJob {
        NewJob(kind: .download, key: "episode:\(episodeID)", feedID: feedID, episodeID: episodeID, host: host(of: url), priority: priority)
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
        let conflict = rearmingFinished ? """
            ON CONFLICT (key) DO UPDATE SET state = 'available', run_at = now(), attempts = 0, crashes = 0, last_error = NULL, finished_at = NULL
            WHERE monsoon_jobs.state IN ('completed', 'failed', 'dead')
            """ : "ON CONFLICT (key) DO NOTHING"
        return try connection.transaction { () throws(PostgresError) -> Set<String> in
            let rows = try connection.execute("""
                INSERT INTO monsoon_jobs (kind, key, feed_id, episode_id, host, priority)
                SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::integer[])
                ORDER BY 2
                \(conflict)
                RETURNING key
                """, [PostgresArray(jobs.map { Optional($0.kind.rawValue) }), PostgresArray(jobs.map { Optional($0.key) }),
                      PostgresArray(jobs.map { $0.feedID.map(String.init) }), PostgresArray(jobs.map { $0.episodeID.map(String.init) }),
                      PostgresArray(jobs.map { Optional($0.host) }), PostgresArray(jobs.map { Optional(String($0.priority)) })])
            var keys = Set<String>()
            for row in rows.rows { if let key = try row.string("key") { keys.insert(key) } }
            // Delivered at commit, once however many rows: NOTIFY serializes committing
            // transactions, so one per transaction, never one per job.
            if !keys.isEmpty { try connection.execute("SELECT pg_notify($1, '')", [channel]) }
            return keys
        }
    }
}
