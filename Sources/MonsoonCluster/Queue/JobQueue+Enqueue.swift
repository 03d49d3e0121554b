import Foundation

/// A job to add to the shared queue.
public struct NewJob: Sendable, Hashable {
    public var kind: ClaimedJob.Kind
    /// What makes the job unique: one job per key, however many processes add it at once
    /// (`feed:<id>`, `episode:<id>`).
    public var key: String
    public var feedID: Int64?
    public var episodeID: Int64?
    /// The host of its URL, for politeness.
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
}

extension JobQueue {
    /// Adds jobs, skipping those whose key is queued already (`ON CONFLICT DO NOTHING`: no error,
    /// no transaction undone), and wakes the workers with one notification if any was added.
    /// - Returns: how many were added.
    @discardableResult
    public static func enqueue(_ jobs: [NewJob], on connection: PostgresConnection) throws(PostgresError) -> Int {
        guard !jobs.isEmpty else { return 0 }
        return try connection.transaction { () throws(PostgresError) -> Int in
            let added = try connection.execute("""
                INSERT INTO monsoon_jobs (kind, key, feed_id, episode_id, host, priority)
                SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::integer[])
                ORDER BY 2
                ON CONFLICT (key) DO NOTHING
                """, [PostgresArray(jobs.map { Optional($0.kind.rawValue) }), PostgresArray(jobs.map { Optional($0.key) }),
                      PostgresArray(jobs.map { $0.feedID.map(String.init) }), PostgresArray(jobs.map { $0.episodeID.map(String.init) }),
                      PostgresArray(jobs.map { Optional($0.host) }), PostgresArray(jobs.map { Optional(String($0.priority)) })]).affectedRows
            // Delivered at commit, once however many rows: NOTIFY serializes committing
            // transactions, so one per transaction, never one per job.
            if added > 0 { try connection.execute("SELECT pg_notify($1, '')", [channel]) }
            return added
        }
    }
}
