import MonsoonStore

extension PodcastLibrary {
    /// The podcasts in `database`, in the order they were subscribed to, read without opening a
    /// library: no table is created or migrated, so a reader that must change nothing (shell
    /// completion at each Tab) can ask. None when the database holds no library.
    public static func podcasts(readingOnly database: Database) throws -> [Podcast] {
        guard try PodcastRecord.tableExists(in: database) else { return [] }
        return try PodcastRecord.all(in: database)
    }
}
