import Foundation

/// A podcast's stored episodes by identity (its UTF-8 bytes: SQLite compares bytes), with their
/// feed metadata and place in the feed.
typealias KnownEpisodes = [[UInt8]: (metadata: EpisodeMetadata, order: Int)]

extension PodcastLibrary {
    /// The identity each parsed episode is stored under: its own, except among items that share a guid.
    ///
    /// The parser gives the first of the items that share a guid the plain guid, and later ones the
    /// guid with their enclosure (``EpisodeIdentity/recordingIdentity(guid:enclosureURL:)``). Which
    /// item comes first can change between refreshes: a publisher puts a new recording that re-uses
    /// an old guid on top. So an item is first matched to the row that already holds its recording
    /// (under its recording identity, or the plain guid with the same enclosure); otherwise the
    /// plain guid would move to the new item, overwrite the old one's row, and the old one would be
    /// added again. An item alone with its guid keeps the guid even when its enclosure changed: that
    /// is the same episode, re-uploaded.
    static func storedIdentities(of episodes: [ParsedEpisode], known: KnownEpisodes) -> [String] {
        var identities = episodes.map(\.identity)
        // Only guids that several items share, now or in the stored rows, need a look: the common
        // feed, without any, costs one counting pass.
        var sharedGuids: Set<String> = []
        var counts: [String: Int] = [:]
        for episode in episodes {
            guard let guid = episode.guid else { continue }
            counts[guid, default: 0] += 1
            if counts[guid] == 2 { sharedGuids.insert(guid) }
        }
        for (identity, row) in known {
            if let guid = row.metadata.guid, !identity.elementsEqual(guid.utf8) { sharedGuids.insert(guid) }
        }
        guard !sharedGuids.isEmpty else { return identities }

        var groups: [String: [Int]] = [:]
        for (index, episode) in episodes.enumerated() {
            if let guid = episode.guid, episode.enclosureURL != nil, sharedGuids.contains(guid) { groups[guid, default: []].append(index) }
        }
        for (guid, members) in groups {
            let plainEnclosure = known[Array(guid.utf8)]?.metadata.enclosureURL.map(EpisodeIdentity.normalizedEnclosureURL)
            var recordings: [Int: String] = [:]
            var chosen: [Int: String] = [:]
            for index in members {
                guard let enclosure = episodes[index].enclosureURL.map(EpisodeIdentity.normalizedEnclosureURL) else { continue }
                let recording = EpisodeIdentity.recordingIdentity(guid: guid, normalizedEnclosureURL: enclosure)
                recordings[index] = recording
                if known[Array(recording.utf8)] != nil {
                    chosen[index] = recording
                } else if enclosure == plainEnclosure {
                    chosen[index] = guid
                }
            }
            let plainTaken = chosen.values.contains(guid)
            for index in members where chosen[index] == nil {
                // The plain guid's row holds another item's recording: this one is a recording of its own.
                chosen[index] = plainTaken && episodes[index].identity == guid ? recordings[index] : episodes[index].identity
            }
            for (index, identity) in chosen { identities[index] = identity }
        }
        // Never two episodes under one identity: should the matching above give one twice, the
        // later episode keeps the parser's (which are unique).
        var used = Set<[UInt8]>()
        for index in identities.indices where !used.insert(Array(identities[index].utf8)).inserted {
            identities[index] = episodes[index].identity
            used.insert(Array(identities[index].utf8))
        }
        return identities
    }
}
