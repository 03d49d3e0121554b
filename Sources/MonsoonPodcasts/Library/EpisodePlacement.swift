import FoundationEssentials

/// A row stored for an episode before, as placing an item of the feed needs it.
package protocol StoredRecording {
    /// The row's enclosure URL is the item's, to the letter (both none counts as the same).
    var sameEnclosure: Bool { get }
    /// Nil when it is the item's, or when the row has none.
    var otherEnclosure: String? { get }
}

/// Which stored row each item of a feed belongs to, decided item by item as a parse hands them out (the rules:
/// `EpisodeWriter+Identities.swift`). The library looks identities up in SQLite, a cluster in what it read of
/// PostgreSQL: the same decisions, so an episode is the same one in both.
///
/// A value: a caller that undoes a page puts back the copy it saved before it.
package struct EpisodePlacement: Sendable {
    package enum Decision<Row> {
        /// Under the identity, over the stored row (nil: a new row).
        case row(String, Row?)
        /// Waits for the end of the feed: see ``settle(guid:enclosure:isStored:)``.
        case waiting
        /// Its identity was given to another item of the feed.
        case leftOut
    }

    package enum Settlement: Equatable {
        /// Its plain guid's stored episode, re-uploaded: that row is the item's.
        case plainRow
        /// A recording of its own (a later item took the plain guid's row back), new under this identity.
        case recording(String)
        /// Its recording identity is taken: left out.
        case leftOut
    }

    /// Guids stored under a recording identity (`guid:GUID|enclosure:URL`): only their items are matched against
    /// stored recordings.
    private let recordingGuids: Set<IdentityHash>
    /// Guids whose stored plain row a later item of the feed took back (its own recording): few.
    package private(set) var plainTaken: Set<String> = []
    /// Identities given to items other than their own (a stored recording, a plain guid's row).
    private var remapped: Set<IdentityHash> = []
    /// Recording-shaped identities (`guid:…`) items were stored under as their own.
    private var recordingShaped: Set<IdentityHash> = []

    package init(recordingGuids: some Sequence<String>) {
        self.recordingGuids = Set(recordingGuids.map(IdentityHash.init))
    }

    package static func isRecordingIdentity(_ identity: String, guid: String?) -> Bool {
        guard let guid else { return false }
        return identity.hasPrefix("guid:") && identity != guid
    }

    /// `stored` looks a row up by identity among the feed's stored rows.
    package mutating func place<Row: StoredRecording>(_ episode: ParsedEpisode, stored: (String) throws -> Row?) rethrows -> Decision<Row> {
        let own = episode.identity
        guard let guid = episode.guid, let enclosure = episode.enclosureURL else { return placeOwn(own, try stored(own)) }
        guard own == guid else { return try placeLater(own, guid: guid, enclosure: enclosure, stored: stored) }
        if recordingGuids.contains(IdentityHash(guid)) {
            // An old recording listed first now (the newer one left the feed, or moved below it).
            let recording = EpisodeIdentity.recordingIdentity(guid: guid, enclosureURL: enclosure)
            if isFree(recording), let row = try stored(recording) {
                remapped.insert(IdentityHash(recording))
                return .row(recording, row)
            }
        }
        let row = try stored(own)
        if let row, !row.sameEnclosure, let other = row.otherEnclosure, !Self.sameRecording(other, enclosure) {
            return .waiting
        }
        return placeOwn(own, row)
    }

    /// Once the whole feed was placed; `isStored` says whether the feed's stored rows hold an identity.
    package mutating func settle(guid: String, enclosure: String, isStored: (String) throws -> Bool) rethrows -> Settlement {
        guard plainTaken.contains(guid) else { return .plainRow }
        let recording = EpisodeIdentity.recordingIdentity(guid: guid, normalizedEnclosureURL: EpisodeIdentity.normalizedEnclosureURL(enclosure))
        guard isFree(recording), try !isStored(recording) else { return .leftOut }
        remapped.insert(IdentityHash(recording))
        return .recording(recording)
    }

    /// A later item under a re-used guid: its own identity is its recording's.
    private mutating func placeLater<Row: StoredRecording>(_ own: String, guid: String, enclosure: URL, stored: (String) throws -> Row?) rethrows -> Decision<Row> {
        if let row = try stored(own) { return placeOwn(own, row) }
        if isFree(guid), let plain = try stored(guid), plain.sameEnclosure || plain.otherEnclosure.map({ Self.sameRecording($0, enclosure) }) == true {
            // The old recording, below a new one that took its guid: it keeps its row.
            plainTaken.insert(guid)
            remapped.insert(IdentityHash(guid))
            return .row(guid, plain)
        }
        return placeOwn(own, nil)
    }

    /// The same URL once normalized (by their digests).
    private static func sameRecording(_ stored: String, _ enclosure: URL) -> Bool {
        EpisodeIdentity.normalizedEnclosureDigest(stored) == EpisodeIdentity.normalizedEnclosureDigest(enclosure.absoluteString)
    }

    private mutating func placeOwn<Row>(_ own: String, _ row: Row?) -> Decision<Row> {
        // Only an identity shaped like a recording's can be one given to another item.
        if own.hasPrefix("guid:") {
            let key = IdentityHash(own)
            guard !remapped.contains(key) else { return .leftOut }
            recordingShaped.insert(key)
        }
        return .row(own, row)
    }

    /// Whether `identity` may be given to an item other than its own.
    private func isFree(_ identity: String) -> Bool {
        let key = IdentityHash(identity)
        return !remapped.contains(key) && !recordingShaped.contains(key)
    }
}
