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
/// Decided item by item as the parse hands them out (``EpisodePlacement``, which the shared library
/// of a cluster uses too), with lookups in the identity index:
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
    /// The placeholder identity of an item that waits: no real identity starts with a space
    /// (guids are trimmed; the others are URLs, `title:…` or `guid:…`).
    static func waitingIdentity(_ order: Int) -> String { " waiting \(order)" }

    /// Settles the items that waited (see above): first those of guids a later item took back,
    /// each a recording of its own (few); then all the others at once, in SQL, each its plain
    /// guid's episode re-uploaded (every item of a feed whose enclosures all moved, at worst).
    func finish() throws {
        guard progress.waiting > 0 else { return }
        let waiting = "podcast_id = ?1 AND identity >= ' waiting ' AND identity < ' waiting!'"
        for guid in progress.placement.plainTaken.sorted() {
            let rows = try database.statement("SELECT id, enclosure_url FROM episodes WHERE \(waiting) AND guid = ?2")
                .query([podcastID, guid]) { (id: $0.int(0), enclosure: $0.text(1) ?? "") }
            for row in rows {
                let settlement = try progress.placement.settle(guid: guid, enclosure: row.enclosure) { recording in
                    (try database.scalarInt("SELECT count(*) FROM episodes WHERE podcast_id = ?1 AND identity = ?2", podcastID, recording) ?? 0) > 0
                }
                guard case .recording(let recording) = settlement else {
                    try database.run("DELETE FROM episodes WHERE id = ?1", row.id)
                    progress.leftOut += 1
                    continue
                }
                try database.run("UPDATE episodes SET identity = ?1 WHERE id = ?2", recording, row.id)
                progress.added += 1
            }
        }
        progress.updated += try database.scalarInt("""
            SELECT count(*) FROM episodes w JOIN episodes s ON s.podcast_id = w.podcast_id AND s.identity = w.guid
            WHERE w.podcast_id = ?1 AND w.identity >= ' waiting ' AND w.identity < ' waiting!'
                AND NOT (s.guid IS w.guid AND s.title IS w.title AND s.enclosure_url IS w.enclosure_url AND s.media_type IS w.media_type
                    AND s.declared_length IS w.declared_length AND s.published IS w.published AND s.duration IS w.duration
                    AND s.season IS w.season AND s.episode IS w.episode AND s.summary IS w.summary AND s.link IS w.link
                    AND s.image_url IS w.image_url AND s.transcript_url IS w.transcript_url AND s.chapters_url IS w.chapters_url
                    AND s.transcripts IS w.transcripts)
            """, podcastID) ?? 0
        // Only the plain rows change (not their identities); the waiting rows are only read.
        try database.run("""
            UPDATE episodes SET feed_order = w.feed_order, guid = w.guid, title = w.title, enclosure_url = w.enclosure_url,
                media_type = w.media_type, declared_length = w.declared_length, published = w.published, duration = w.duration,
                season = w.season, episode = w.episode, summary = w.summary, link = w.link, image_url = w.image_url,
                transcript_url = w.transcript_url, chapters_url = w.chapters_url, transcripts = w.transcripts
            FROM (SELECT feed_order, \(EpisodeWriter.columns) FROM episodes WHERE \(waiting)) AS w
            WHERE episodes.podcast_id = ?1 AND episodes.identity = w.guid
            """, podcastID)
        try database.run("""
            DELETE FROM episodes WHERE \(waiting) AND EXISTS (SELECT 1 FROM episodes s WHERE s.podcast_id = ?1 AND s.identity = episodes.guid)
            """, podcastID)
        // Nothing stored under its guid any more (a row cannot go during a refresh, but if it did): new.
        try database.run("UPDATE episodes SET identity = guid WHERE \(waiting)", podcastID)
        progress.added += database.changes
        progress.waiting = 0
    }
}
