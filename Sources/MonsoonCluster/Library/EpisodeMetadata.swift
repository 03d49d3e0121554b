import FoundationEssentials

/// What the shared library keeps of an episode for its manifest (`monsoon_episodes.metadata`,
/// JSON): the fields the feed gave, small. The file's own facts (size, hash, URLs, validators)
/// are the ledger's.
public struct EpisodeMetadata: Sendable, Hashable, Codable {
    public var title: String?
    public var guid: String?
    /// The publish date, ISO 8601 in UTC ("2024-01-31T10:00:00Z").
    public var published: String?
    /// The enclosure's declared media type.
    public var mediaType: String?
    /// The episode's web page.
    public var link: String?
}
