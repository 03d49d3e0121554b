import MonsoonStore

/// The `settings` table: one row per key set, globally (`podcast_id` 0) or for one podcast.
/// Every SQL statement on it is here; ``Settings`` checks and types the values.
enum SettingRecord {
    static let migrator = Migrator(component: "settings", [
        .init(version: 1, sql: """
            CREATE TABLE settings (
                key TEXT NOT NULL,
                podcast_id INTEGER NOT NULL DEFAULT 0,
                value TEXT NOT NULL,
                PRIMARY KEY (key, podcast_id)
            );
            """),
    ])

    static func value(_ key: SettingKey, podcast: Int?, in database: Database) throws -> String? {
        try database.scalarText("SELECT value FROM settings WHERE key = ? AND podcast_id = ?", key.rawValue, podcast ?? 0)
    }

    /// Every podcast's own value of `key`.
    static func podcastValues(_ key: SettingKey, in database: Database) throws -> [Int: String] { try podcastValues(named: key.rawValue, in: database) }

    /// `named`: a key of its own not in ``SettingKey`` (kept by Monsoon, not set by `config`) too.
    static func podcastValues(named key: String, in database: Database) throws -> [Int: String] {
        let rows = try database.statement("SELECT podcast_id, value FROM settings WHERE key = ? AND podcast_id != 0").query([key], reading: Column.self) {
            ($0.int(.podcastID), $0.text(.value) ?? "")
        }
        return Dictionary(rows, uniquingKeysWith: { $1 })
    }

    static func set(_ key: SettingKey, _ value: String, podcast: Int?, in database: Database) throws {
        try set(named: key.rawValue, value, podcast: podcast, in: database)
    }

    static func set(named key: String, _ value: String, podcast: Int?, in database: Database) throws {
        try database.run("INSERT INTO settings (key, podcast_id, value) VALUES (?1, ?2, ?3) ON CONFLICT (key, podcast_id) DO UPDATE SET value = ?3",
                         key, podcast ?? 0, value)
    }

    static func unset(_ key: SettingKey, podcast: Int?, in database: Database) throws {
        try database.run("DELETE FROM settings WHERE key = ? AND podcast_id = ?", key.rawValue, podcast ?? 0)
    }

    private enum Column: Int, TableColumn { case podcastID, value }
}
