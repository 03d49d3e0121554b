import MonsoonStore

extension PodcastLibrary {
    /// Without opening a library: nothing is created or migrated, so a reader that must change nothing (shell completion
    /// at each Tab) can ask.
    public static func podcasts(readingOnly database: Database) throws -> [Podcast] {
        guard try PodcastRecord.tableExists(in: database) else { return [] }
        return try PodcastRecord.all(in: database)
    }
}
