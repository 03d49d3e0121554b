/// The shared queue's tables in PostgreSQL, and the numbered steps that make them.
///
/// Each step runs in a transaction of its own, which records it in `monsoon_schema` (version,
/// applied_at), so a failed step leaves the database as the step before left it. Every step
/// first takes a transaction-scoped advisory lock: processes that migrate at once (workers
/// starting together, `cluster init` run twice) take turns, and the later ones find the work
/// done. A database whose schema is newer than this build is refused, never touched.
public enum ClusterSchema {
    /// One numbered step.
    public struct Migration: Sendable {
        /// The version the schema is at once this step has run; steps run in ascending order.
        public var version: Int
        /// The statements, separated by semicolons.
        public var sql: String
    }

    /// What `migrate` found and did.
    public struct Outcome: Sendable, Hashable {
        /// The version the database had before (0: it had none of Monsoon's tables).
        public var previousVersion: Int
        /// The version it has now: `latestVersion`.
        public var version: Int
    }

    /// The key of the advisory lock that orders migrations: "monsoon" in ASCII, a number no other
    /// program is likely to lock.
    static let lockKey: Int64 = 0x6d_6f6e_736f_6f6e

    /// The version this build brings a database to.
    public static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// The database's schema version: 0 when it has none of Monsoon's tables. Reads only.
    public static func version(of connection: PostgresConnection) throws(PostgresError) -> Int {
        // to_regclass: a missing table reads as NULL, not as an error that would end a transaction.
        guard try connection.execute("SELECT to_regclass('monsoon_schema') IS NOT NULL AS present").first?.bool("present") == true else { return 0 }
        return try connection.execute("SELECT coalesce(max(version), 0) AS version FROM monsoon_schema").first?.int("version") ?? 0
    }

    /// Refuses a database whose schema is not this build's: none or an older one (`cluster init`
    /// brings it up), or a newer one (this Monsoon is too old for it). Reads only.
    /// - Throws: `PostgresError` `.newerSchema` saying which, and what to do.
    public static func requireCurrent(_ connection: PostgresConnection) throws(PostgresError) {
        let version = try version(of: connection)
        guard version == latestVersion else {
            throw PostgresError(code: .newerSchema, message: version > latestVersion
                ? "the database's schema is version \(version), newer than this Monsoon's (\(latestVersion)): upgrade Monsoon on this machine"
                : "the database has no cluster schema (or an older one): run 'monsoon cluster init --db …' first")
        }
    }

    /// Applies the steps the database has not had, each in its own transaction.
    ///
    /// - Throws: `PostgresError`: `.newerSchema` for a database a newer Monsoon made, or the
    ///   error of the connection or of the step that failed.
    @discardableResult
    public static func migrate(_ connection: PostgresConnection) throws -> Outcome {
        var previous: Int?
        while true {
            // Read committed: after the lock is granted, each statement sees what the process
            // that held it committed, whatever the database's default isolation.
            let applied = try connection.transaction(isolation: .readCommitted) { () throws(PostgresError) -> Int? in
                try connection.execute("SELECT pg_advisory_xact_lock($1)", [lockKey])
                let current = try version(of: connection)
                if previous == nil { previous = current }
                if current > latestVersion {
                    throw PostgresError.newerSchema(database: connection.database, server: connection.server, version: current, supported: latestVersion)
                }
                guard let next = migrations.first(where: { $0.version > current }) else { return nil }
                if current == 0 {
                    try connection.executeScript("CREATE TABLE IF NOT EXISTS monsoon_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
                }
                try connection.executeScript(next.sql)
                try connection.execute("INSERT INTO monsoon_schema (version) VALUES ($1)", [next.version])
                return next.version
            }
            if applied == nil { break }
        }
        return Outcome(previousVersion: previous ?? 0, version: latestVersion)
    }
}
