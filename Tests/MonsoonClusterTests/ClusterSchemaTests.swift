import Foundation
@testable import MonsoonCluster
import MonsoonEngine
import Testing

/// The schema's migrations: once each, safe when several processes run them at once, and never
/// over a newer Monsoon's schema.
@Suite(.temporaryPostgres) struct ClusterSchemaTests {
    static let tables = ["monsoon_episodes", "monsoon_feeds", "monsoon_hosts", "monsoon_jobs", "monsoon_leader", "monsoon_ledger", "monsoon_schema", "monsoon_workers"]

    @Test func migratingTwiceCreatesThenFindsTheSchemaCurrent() async throws {
        try await withConnection { connection in
            #expect(try ClusterSchema.version(of: connection) == 0)
            let first = try ClusterSchema.migrate(connection)
            #expect(first.previousVersion == 0 && first.version == 6 && ClusterSchema.latestVersion == 6)
            let second = try ClusterSchema.migrate(connection)
            #expect(second.previousVersion == 6 && second.version == 6)
            #expect(try ClusterSchema.version(of: connection) == 6)
            let tables = try connection.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'monsoon\\_%' ORDER BY tablename")
            #expect(try tables.rows.map { try $0.string(0) } == Self.tables)
            let recorded = try connection.execute("SELECT version, applied_at FROM monsoon_schema")
            #expect(try recorded.rows.map { try $0.int("version") } == [1, 2, 3, 4, 5, 6])
            let applied = try #require(try recorded.first?.date("applied_at"))
            #expect(abs(applied.timeIntervalSinceNow) < 60)
        }
    }

    /// A database of the first version (workers of an earlier build ran on it) is upgraded and
    /// keeps its rows; one of the second loses the engines' queues workers no longer keep there. A
    /// worker of this build refuses either until then.
    @Test func anOlderDatabaseIsUpgradedWithItsRows() async throws {
        try await withConnection { connection in
            try connection.executeScript("CREATE TABLE monsoon_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            try connection.executeScript(ClusterSchema.migrations[0].sql)
            try connection.execute("INSERT INTO monsoon_schema (version) VALUES (1)")
            try connection.execute("INSERT INTO monsoon_feeds (url, folder) VALUES ('https://example.org/feed.xml', 'Show')")
            #expect(throws: PostgresError.self) { try ClusterSchema.requireCurrent(connection) }
            let outcome = try ClusterSchema.migrate(connection)
            #expect(outcome.previousVersion == 1 && outcome.version == 6)
            #expect(try connection.execute("SELECT folder FROM monsoon_feeds").first?.string(0) == "Show")
            let tables = try connection.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'monsoon\\_%' ORDER BY tablename")
            #expect(try tables.rows.map { try $0.string(0) } == Self.tables, "no monsoon_engine_ table remains")
            try ClusterSchema.requireCurrent(connection)
        }
    }

    /// Version 4: the jobs of a version 3 database take their arguments from their feeds and
    /// episodes (a claim reads nothing else), and the ledger no longer hangs off the jobs: a
    /// finished job deleted leaves its file's row, which is its episode's.
    @Test func version4GivesJobsTheirArgumentsAndTheLedgerItsEpisodes() async throws {
        try await withConnection { connection in
            try connection.executeScript("CREATE TABLE monsoon_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            for migration in ClusterSchema.migrations.prefix(3) {
                try connection.executeScript(migration.sql)
                try connection.execute("INSERT INTO monsoon_schema (version) VALUES ($1)", [migration.version])
            }
            try connection.executeScript("""
                INSERT INTO monsoon_feeds (id, url, folder, rules) VALUES (1, 'https://feeds.example.com/rss', 'Show', '{"maxSize": 1000000}');
                INSERT INTO monsoon_episodes (id, feed_id, identity, enclosure_url, enclosure_length, file_name)
                  VALUES (7, 1, 'g1', 'https://cdn.example.com/a.mp3', 5000, 'a'), (8, 1, 'g2', 'https://cdn.example.com/b.mp3', NULL, 'b');
                INSERT INTO monsoon_jobs (id, kind, key, feed_id, episode_id, host, state, finished_at) VALUES
                  (1, 'refresh', 'refresh:1', 1, NULL, 'feeds.example.com', 'available', NULL),
                  (2, 'download', 'episode:7', 1, 7, 'cdn.example.com', 'completed', now() - interval '8 days'),
                  (3, 'download', 'episode:8', 1, 8, 'cdn.example.com', 'available', NULL);
                INSERT INTO monsoon_ledger (job_id, episode_id, path, size, sha256, worker, node, lease_token)
                  VALUES (2, 7, 'Show/a.mp3', 5000, 'ab', 'w1', 'n1', 1);
                """)
            #expect(try ClusterSchema.migrate(connection).previousVersion == 3)
            let jobs = try connection.execute("SELECT id, url, feed_url, path, max_bytes, expected_length FROM monsoon_jobs ORDER BY id").rows.map(\.values)
            #expect(jobs == [
                ["1", "https://feeds.example.com/rss", "https://feeds.example.com/rss", nil, nil, nil],
                ["2", "https://cdn.example.com/a.mp3", "https://feeds.example.com/rss", "Show/a", "1000000", "5000"],
                ["3", "https://cdn.example.com/b.mp3", "https://feeds.example.com/rss", "Show/b", "1000000", nil],
            ])
            // The cleaner's statement: the ledger keeps the file's row.
            #expect(try connection.execute("DELETE FROM monsoon_jobs WHERE state IN ('completed','failed','dead') AND finished_at < now() - interval '7 days'").affectedRows == 1)
            #expect(try connection.execute("SELECT job_id, episode_id, path FROM monsoon_ledger").rows.map(\.values) == [["2", "7", "Show/a.mp3"]])
            // One file per episode: a second row of it is refused.
            let error = try #require(throws: PostgresError.self) {
                try connection.execute("""
                    INSERT INTO monsoon_ledger (job_id, episode_id, path, size, sha256, worker, node, lease_token) VALUES (9, 7, 'Show/a.mp3', 1, 'cd', 'w1', 'n1', 2)
                    """)
            }
            #expect(error.constraint == "monsoon_ledger_episode")
        }
    }

    /// Migrators that start while another holds the lock all wait, then run one after another:
    /// without the lock, two `CREATE TABLE` of the same table at once fail one of them.
    @Test func migratorsStartedAtOnceAllSucceedAndMigrateOnce() async throws {
        let server = try temporaryPostgres()
        let url = try await onThread { try server.createDatabase() }
        let holder = try await onThread { () throws -> PostgresConnection in
            let holder = try PostgresConnection(url)
            try holder.execute("SELECT pg_advisory_lock($1)", [ClusterSchema.lockKey])
            return holder
        }
        let outcomes = try await withThrowingTaskGroup(of: ClusterSchema.Outcome.self) { group in
            for _ in 0..<3 {
                group.addTask { try await onThread { try ClusterSchema.migrate(PostgresConnection(url)) } }
            }
            // Lets the lock go once every migrator waits for it.
            try await onThread {
                let waiting = """
                    SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """
                let deadline = Date().addingTimeInterval(30)
                while try holder.execute(waiting).first?.int(0) != 3 {
                    guard Date() < deadline else { throw PostgresTestError("the migrators did not all wait for the lock") }
                    usleep(10_000)
                }
                try holder.execute("SELECT pg_advisory_unlock($1)", [ClusterSchema.lockKey])
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.map(\.version) == [6, 6, 6])
        // One found nothing; the others found what ran before them (each step takes the lock alone).
        let previous = outcomes.map(\.previousVersion).sorted()
        #expect(previous.first == 0 && previous.dropFirst().allSatisfy { $0 > 0 }, "\(previous)")
        try await onThread {
            let connection = try PostgresConnection(url)
            #expect(try connection.execute("SELECT count(*) FROM monsoon_schema").first?.int(0) == 6)
            #expect(try connection.execute("SELECT count(*) FROM pg_class WHERE relname = 'monsoon_jobs'").first?.int(0) == 1)
        }
    }

    @Test func aSchemaNewerThanThisBuildIsRefusedAndLeftAlone() async throws {
        let server = try temporaryPostgres()
        try await withConnection { connection in
            try ClusterSchema.migrate(connection)
            try connection.execute("INSERT INTO monsoon_schema (version) VALUES (99)")
            let error = try #require(throws: PostgresError.self) { try ClusterSchema.migrate(connection) }
            #expect(error.code == .newerSchema)
            #expect(error.message == "the database \(connection.database) at 127.0.0.1:\(server.port) has schema version 99, newer than this Monsoon (6); upgrade Monsoon (the database was left as it is)")
            #expect(try connection.execute("SELECT count(*) FROM monsoon_schema").first?.int(0) == 7)
        }
    }

    /// A lease renewal, a progress update and a heartbeat change no indexed column: PostgreSQL
    /// updates the row in place (HOT), writing no index. (clock_timestamp(), not now(): now() is
    /// the transaction's start, and a value that does not change keeps any update HOT.)
    @Test func leaseRenewalsAndHeartbeatsAreHOTUpdates() async throws {
        try await withConnection { connection in
            try ClusterSchema.migrate(connection)
            try connection.transaction {
                let id = try #require(try connection.execute("INSERT INTO monsoon_jobs (kind, key, host) VALUES ('download', 'e1', 'cdn.example.com') RETURNING id").first?.int64(0))
                let token = try #require(try connection.execute("""
                    UPDATE monsoon_jobs SET state = 'running', attempts = attempts + 1, lease_token = nextval('monsoon_lease_tokens'),
                      leased_by = 'w1', lease_expires_at = now() + interval '30 seconds' WHERE id = $1 RETURNING lease_token
                    """, [id]).first?.int64(0))
                try connection.execute("INSERT INTO monsoon_workers (name, node, pid) VALUES ('w1', 'node1', 1)")
                let before = try Self.updates(connection)
                let renewed = try connection.execute("""
                    UPDATE monsoon_jobs SET lease_expires_at = clock_timestamp() + interval '30 seconds', bytes = $3 WHERE id = $1 AND lease_token = $2
                    """, [id, token, 1_000_000])
                try connection.execute("UPDATE monsoon_workers SET heartbeat_at = clock_timestamp(), bytes = bytes + 1000000, speed = 250000 WHERE name = 'w1'")
                let after = try Self.updates(connection)
                #expect(renewed.affectedRows == 1)
                #expect(after["monsoon_jobs"]?.updated == (before["monsoon_jobs"]?.updated ?? 0) + 1)
                #expect(after["monsoon_jobs"]?.hot == (before["monsoon_jobs"]?.hot ?? 0) + 1, "a lease renewal must not touch an index")
                #expect(after["monsoon_workers"]?.hot == (before["monsoon_workers"]?.hot ?? 0) + 1, "a heartbeat must not touch an index")
            }
        }
    }

    /// Updates and HOT updates of this transaction, by table.
    static func updates(_ connection: PostgresConnection) throws -> [String: (updated: Int, hot: Int)] {
        var counts: [String: (updated: Int, hot: Int)] = [:]
        for row in try connection.execute("SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname LIKE 'monsoon\\_%'").rows {
            counts[try row.string(0) ?? ""] = (try row.int(1) ?? 0, try row.int(2) ?? 0)
        }
        return counts
    }
}
