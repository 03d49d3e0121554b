import FoundationEssentials

/// A host's politeness, and its jobs ready and running (`cluster host`).
public struct HostSettings: Sendable, Hashable {
    public var host: String
    /// The most jobs running on it at once, across every worker.
    public var maxConnections: Int
    /// The least time between two jobs' starts on it, in milliseconds (0: none).
    public var minIntervalMilliseconds: Int
    /// Until when no job starts on it (a 429, a `Retry-After`); nil when it is not held now.
    public var heldUntil: Date?
    /// Its jobs due and waiting (`available`).
    public var ready: Int
    /// The jobs running on it, whether its own or ones whose redirects end there.
    public var running: Int
    /// Whether nothing was set for it and no job has named it: these are the defaults.
    public var isDefault: Bool
}

extension ClusterAdmin {
    /// The politeness a host has when nothing was set for it: 2 connections at once, no interval.
    public static let defaultMaxConnections = 2

    /// `host`'s settings, the defaults for a host the database has no row of.
    public func hostSettings(_ host: String) throws(PostgresError) -> HostSettings {
        guard let row = try connection.execute("""
            SELECT max_connections, min_interval_ms, CASE WHEN held_until > now() THEN held_until END AS held_until, ready, running
            FROM monsoon_hosts WHERE host = $1
            """, [host]).first else {
            return HostSettings(host: host, maxConnections: Self.defaultMaxConnections, minIntervalMilliseconds: 0, heldUntil: nil, ready: 0, running: 0, isDefault: true)
        }
        return HostSettings(host: host, maxConnections: try row.int("max_connections") ?? Self.defaultMaxConnections,
                            minIntervalMilliseconds: try row.int("min_interval_ms") ?? 0,
                            heldUntil: try row.date("held_until"), ready: try row.int("ready") ?? 0, running: try row.int("running") ?? 0, isDefault: false)
    }

    /// Sets a host's politeness: the most connections at once, and the least time between
    /// request starts; nil leaves one as it is (the default for a new host). A lower limit
    /// than the jobs running there stops none: no new one starts until they are under it.
    public func setLimits(host: String, maxConnections: Int?, minIntervalMilliseconds: Int?) throws(PostgresError) {
        try connection.execute("""
            INSERT INTO monsoon_hosts AS h (host, max_connections, min_interval_ms) VALUES ($1, coalesce($2, \(Self.defaultMaxConnections)), coalesce($3, 0))
            ON CONFLICT (host) DO UPDATE SET max_connections = coalesce($2, h.max_connections), min_interval_ms = coalesce($3, h.min_interval_ms)
            """, [host, maxConnections, minIntervalMilliseconds])
    }
}
