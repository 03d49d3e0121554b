import Foundation
import MonsoonStore

/// Which row each item of a feed is stored in.
///
/// An item is stored under its own identity (the parser's, see ``ParsedEpisode/identity``), except
/// among items that share a guid. The parser gives the first of the items that share a guid the
/// plain guid, and later ones the guid with their enclosure
/// (``EpisodeIdentity/recordingIdentity(guid:enclosureURL:)``). Which item comes first can change
/// between refreshes: a publisher puts a new recording that re-uses an old guid on top. So an item
/// goes to the row that already holds its recording (under its recording identity, or under the
/// plain guid with the same enclosure); otherwise the plain guid would move to the new item,
/// overwrite the old one's row (and its user state), and the old one would be added again. An item
/// alone with its guid keeps the guid even when its enclosure changed: that is the same episode,
/// re-uploaded.
///
/// Decided item by item as the parse hands them out, with lookups in the identity index:
/// - A later item of a re-used guid takes the row of its recording, else the plain guid's row when
///   that holds its recording, else a new row.
/// - The first item of a guid takes a stored row of its recording when the guid has stored
///   recordings, else the plain guid's row when that is new, holds no enclosure, or holds the same
///   recording.
/// - Otherwise the plain guid's row holds another recording, and whether this item is that row's
///   episode re-uploaded, or a new recording listed above the old one, depends on whether a later
///   item of the feed is the old recording. Such an item waits, in a row of its own under a
///   placeholder identity, for ``EpisodeWriter/finish()``: it then takes the plain guid's row, unless
///   a later item took it back, and then keeps its own row under its recording identity.
///
/// Never two items under one identity: an identity given to an item other than its own is
/// remembered, and an item whose own identity another item took is left out (only a feed whose
/// guids imitate recording identities, `guid:…|enclosure:…`, can get there).
extension EpisodeWriter {
    /// Where an item goes.
    enum Placement {
        /// Under the identity, over the stored row (nil: a new row).
        case row(String, Stored?)
        /// Waits for the end of the feed (see above).
        case waiting
        /// Its identity was given to another item of the feed.
        case leftOut
    }

    /// The placeholder identity of an item that waits: no real identity starts with a space
    /// (guids are trimmed; the others are URLs, `title:…` or `guid:…`).
    static func waitingIdentity(_ order: Int) -> String { " waiting \(order)" }

    /// Where `episode` goes; `values` are its statement parameters (see ``values(of:podcastID:order:)``).
    func place(_ episode: ParsedEpisode, values: [SQLValueConvertible]) throws -> Placement {
        let own = episode.identity
        guard let guid = episode.guid, let enclosure = episode.enclosureURL else { return placeOwn(own, try stored(own, values: values)) }
        guard own == guid else { return try placeLater(episode, guid: guid, enclosure: enclosure, values: values) }
        if recordingGuids.contains(IdentityHash(guid)) {
            // An old recording listed first now (the newer one left the feed, or moved below it).
            let recording = EpisodeIdentity.recordingIdentity(guid: guid, enclosureURL: enclosure)
            if isFree(recording), let stored = try stored(recording, values: values) {
                progress.remapped.insert(IdentityHash(recording))
                return .row(recording, stored)
            }
        }
        let stored = try stored(own, values: values)
        if let stored, !stored.sameEnclosure, let other = stored.otherEnclosure,
           EpisodeIdentity.normalizedEnclosureURL(other) != EpisodeIdentity.normalizedEnclosureURL(enclosure) {
            return .waiting
        }
        return placeOwn(own, stored)
    }

    /// A later item under a re-used guid: its own identity is its recording's.
    private func placeLater(_ episode: ParsedEpisode, guid: String, enclosure: URL, values: [SQLValueConvertible]) throws -> Placement {
        if let stored = try stored(episode.identity, values: values) { return placeOwn(episode.identity, stored) }
        if isFree(guid), let plain = try stored(guid, values: values), plain.sameEnclosure
            || plain.otherEnclosure.map({ EpisodeIdentity.normalizedEnclosureURL($0) == EpisodeIdentity.normalizedEnclosureURL(enclosure) }) == true {
            // The old recording, below a new one that took its guid: it keeps its row.
            progress.plainTaken.insert(IdentityHash(guid))
            progress.remapped.insert(IdentityHash(guid))
            return .row(guid, plain)
        }
        return placeOwn(episode.identity, nil)
    }

    private func placeOwn(_ own: String, _ stored: Stored?) -> Placement {
        // Only an identity shaped like a recording's can be one given to another item.
        if own.hasPrefix("guid:") {
            let key = IdentityHash(own)
            guard !progress.remapped.contains(key) else { return .leftOut }
            progress.recordingShaped.insert(key)
        }
        return .row(own, stored)
    }

    /// Whether `identity` may be given to an item other than the one it is the own identity of.
    private func isFree(_ identity: String) -> Bool {
        let key = IdentityHash(identity)
        return !progress.remapped.contains(key) && !progress.recordingShaped.contains(key)
    }

    /// Settles the items that waited (see above), a few hundred rows at a time: never all in memory.
    func finish() throws {
        guard progress.waiting > 0 else { return }
        let waiting = try database.statement("""
            SELECT id, guid, enclosure_url, feed_order FROM episodes
            WHERE podcast_id = ?1 AND identity >= ' waiting ' AND identity < ' waiting!' LIMIT 500
            """)
        while true {
            // Each settled row leaves the range, so every query starts afresh: no cursor runs over rows being changed.
            let rows = try waiting.query([podcastID]) { (id: $0.int(0), guid: $0.text(1) ?? "", enclosure: $0.text(2) ?? "", order: $0.int(3)) }
            guard !rows.isEmpty else { break }
            for row in rows { try settle(row.id, guid: row.guid, enclosure: row.enclosure, order: row.order) }
        }
        progress.waiting = 0
    }

    private func settle(_ id: Int, guid: String, enclosure: String, order: Int) throws {
        if progress.plainTaken.contains(IdentityHash(guid)) {
            let recording = EpisodeIdentity.recordingIdentity(guid: guid, normalizedEnclosureURL: EpisodeIdentity.normalizedEnclosureURL(enclosure))
            let taken = try database.scalarInt("SELECT count(*) FROM episodes WHERE podcast_id = ?1 AND identity = ?2", podcastID, recording) ?? 0
            guard isFree(recording), taken == 0 else {
                try database.run("DELETE FROM episodes WHERE id = ?1", id)
                progress.leftOut += 1
                return
            }
            try database.run("UPDATE episodes SET identity = ?1 WHERE id = ?2", recording, id)
            progress.remapped.insert(IdentityHash(recording))
            progress.added += 1
            return
        }
        // The plain guid's episode, re-uploaded: its row takes the item's metadata and place.
        let compare = try database.statement("""
            SELECT s.id, s.feed_order, s.guid IS w.guid AND s.title IS w.title AND s.enclosure_url IS w.enclosure_url
                AND s.media_type IS w.media_type AND s.declared_length IS w.declared_length AND s.published IS w.published
                AND s.duration IS w.duration AND s.season IS w.season AND s.episode IS w.episode AND s.summary IS w.summary
                AND s.link IS w.link AND s.image_url IS w.image_url AND s.transcript_url IS w.transcript_url AND s.chapters_url IS w.chapters_url
            FROM episodes s, episodes w WHERE s.podcast_id = ?1 AND s.identity = ?2 AND w.id = ?3
            """)
        guard let plain = try compare.first([podcastID, guid, id], { (id: $0.int(0), order: $0.int(1), same: $0.bool(2)) }) else {
            // Nothing stored under the guid any more (it cannot go, but if it did): the item is new.
            try database.run("UPDATE episodes SET identity = ?1 WHERE id = ?2", guid, id)
            progress.added += 1
            return
        }
        if !plain.same {
            try database.run("""
                UPDATE episodes SET (feed_order, \(Self.columns)) = (SELECT feed_order, \(Self.columns) FROM episodes WHERE id = ?1) WHERE id = ?2
                """, id, plain.id)
            progress.updated += 1
        } else if plain.order != order {
            try database.run("UPDATE episodes SET feed_order = ?1 WHERE id = ?2", order, plain.id)
        }
        try database.run("DELETE FROM episodes WHERE id = ?1", id)
    }
}
