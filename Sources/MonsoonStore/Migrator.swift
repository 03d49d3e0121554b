/// Brings one component's tables up to date, one numbered step at a time.
///
/// Several components share one database (the download queue, the podcast
/// library), so each keeps its own version in a `schema_versions` table. All
/// pending steps run in one `IMMEDIATE` transaction, so two processes starting at
/// once migrate once, and a failed step leaves the database as it was. A database
/// from a newer Monsoon is refused, never touched.
public struct Migrator: Sendable {
    /// One numbered step of a component's schema.
    public struct Migration: Sendable {
        /// The version the database is at once this step has run; steps run in ascending order.
        public var version: Int
        /// The statements to run, one or several separated by semicolons.
        public var sql: String
        /// What the step does after `sql` that SQL says badly (filling a new column from a rule
        /// of the code's, say), in the same transaction.
        public var then: (@Sendable (Database) throws -> Void)?

        /// A step that brings the component to `version` by running `sql`, then `then`.
        public init(version: Int, sql: String, then: (@Sendable (Database) throws -> Void)? = nil) {
            self.version = version
            self.sql = sql
            self.then = then
        }
    }

    /// The component's name, e.g. "downloads".
    public var component: String
    /// The component's steps, sorted by version.
    public var migrations: [Migration]

    /// A migrator for `component`; the steps may come in any order, they are sorted by version.
    public init(component: String, _ migrations: [Migration]) {
        self.component = component
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// The version of the last step: what `migrate` brings the database to (0 with no steps).
    public var latestVersion: Int { migrations.last?.version ?? 0 }

    /// The component's version in `database` (0 when it has none yet).
    public func version(of database: Database) throws -> Int {
        try database.execute("CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        return try database.scalarInt("SELECT version FROM schema_versions WHERE component = ?", component) ?? 0
    }

    /// Applies the steps the database has not had. A connection that only reads changes nothing: it
    /// fails with ``StoreError/Code/olderSchema`` when there are steps to apply.
    public func migrate(_ database: Database) throws {
        if database.isReadOnly { return try check(database) }
        // A quick look first: an up-to-date database needs no write lock at all.
        if let current = try? database.scalarInt("SELECT version FROM schema_versions WHERE component = ?", component), current == latestVersion {
            return
        }
        try database.write {
            let current = try version(of: database)
            if current > latestVersion {
                throw StoreError.newerSchema(path: database.path, component: component, version: current, supported: latestVersion)
            }
            for migration in migrations where migration.version > current {
                try database.execute(migration.sql)
                try migration.then?(database)
            }
            if latestVersion > current {
                try database.run("INSERT INTO schema_versions (component, version) VALUES (?1, ?2) ON CONFLICT (component) DO UPDATE SET version = ?2",
                                 component, latestVersion)
            }
        }
    }

    /// Checks, on a connection that only reads, that the database has had every step.
    private func check(_ database: Database) throws(StoreError) {
        // Asked of the catalogue first: reading a missing table is an error, creating it a write.
        let recorded = try database.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_versions'") == 1
        let current = recorded ? try database.scalarInt("SELECT version FROM schema_versions WHERE component = ?", component) ?? 0 : 0
        if current > latestVersion {
            throw StoreError.newerSchema(path: database.path, component: component, version: current, supported: latestVersion)
        }
        if current < latestVersion {
            throw StoreError.olderSchema(path: database.path, component: component, version: current, supported: latestVersion)
        }
    }
}
