import MonsoonStore

extension PodcastLibrary {
    /// The podcasts in `database`, in the order they were subscribed to, read without opening a
    /// library: no table is created or migrated, so a reader that must change nothing (shell
    /// completion at each Tab) can ask. None when the database holds no library.
    public static func podcasts(readingOnly database: Database) throws -> [Podcast] {
        guard try database.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'podcasts'") == 1 else { return [] }
        return try podcasts(in: database)
    }

    static func podcasts(in database: Database) throws -> [Podcast] {
        try database.statement("SELECT \(Podcast.columns) FROM podcasts p ORDER BY p.id").query { Podcast($0) }
    }
}
