/// Brings a database's schema up to date, one numbered step at a time.
///
/// The version lives in `PRAGMA user_version`. All pending steps run in one
/// `IMMEDIATE` transaction, so two processes starting at once migrate once, and a
/// failed step leaves the database as it was. A database from a newer version is
/// refused, never touched.
public struct Migrator: Sendable {
    public struct Migration: Sendable {
        public var version: Int
        public var sql: String

        public init(version: Int, sql: String) {
            self.version = version
            self.sql = sql
        }
    }

    public var migrations: [Migration]

    public init(_ migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    public var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Applies the steps the database has not had.
    public func migrate(_ database: Database) throws {
        try database.write {
            let current = try database.scalarInt("PRAGMA user_version") ?? 0
            if current > latestVersion {
                throw StoreError.newerSchema(path: database.path, version: current, supported: latestVersion)
            }
            for migration in migrations where migration.version > current {
                try database.execute(migration.sql)
                try database.execute("PRAGMA user_version = \(migration.version)")
            }
        }
    }
}
