import Foundation
import MonsoonStore

/// Writes a feed's episodes into the library as a parse hands them out, a batch at a time, inside
/// the caller's transaction: a new episode is inserted, a known one is found by its identity (one
/// lookup in the `(podcast_id, identity)` index: the known episodes are never all loaded) and
/// updated when the feed changed its metadata. The user's state is never written here.
///
/// Which row an item belongs to is decided as it comes (see `EpisodeWriter+Identities.swift`),
/// with what the database holds and a few small sets; the only items that wait for the end of the
/// feed are those whose decision depends on items still to come, and they wait in the database.
///
/// - Important: used inside one transaction, from one task; ``finish()`` must be called after the
///   last batch.
final class EpisodeWriter {
    /// What the writer did so far, kept apart so a later page that fails can be undone with its
    /// savepoint: the caller saves it before the page and puts it back after a rollback.
    struct Progress {
        /// The feed order of the next episode: its place among all the pages' kept items.
        var order = 0
        var added = 0
        var updated = 0
        /// Items left out because the identity they would be stored under was taken (see ``EpisodePlacement``).
        var leftOut = 0
        /// Items waiting for the end of the feed (see ``EpisodePlacement/Decision/waiting``).
        var waiting = 0
        /// Which row each item went to so far.
        var placement: EpisodePlacement
    }

    var progress: Progress
    let database: Database
    let podcastID: Int
    /// A new podcast: nothing is stored yet, so every item is inserted under its own identity.
    let subscribing: Bool

    private let insert: Statement
    private let lookup: Statement
    private let updateAll: Statement
    private let updateOrder: Statement

    /// The episodes' columns the feed sets, in the order of the statements' parameters ?4 to ?18
    /// (?1 is the podcast, ?2 the identity, ?3 the feed order).
    static let columns = """
        guid, title, enclosure_url, media_type, declared_length, published, duration, season, episode, summary, link, image_url, transcript_url, chapters_url,
        transcripts
        """

    init(database: Database, podcastID: Int, subscribing: Bool) throws {
        self.database = database
        self.podcastID = podcastID
        self.subscribing = subscribing
        insert = try database.statement("""
            INSERT INTO episodes (podcast_id, identity, feed_order, \(Self.columns))
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
            """)
        // The comparison runs in SQLite, on the values bound for the update: no string is made
        // for a row that did not change.
        lookup = try database.statement("""
            SELECT id, feed_order, enclosure_url IS ?6,
                guid IS ?4 AND title IS ?5 AND enclosure_url IS ?6 AND media_type IS ?7 AND declared_length IS ?8 AND published IS ?9
                AND duration IS ?10 AND season IS ?11 AND episode IS ?12 AND summary IS ?13 AND link IS ?14 AND image_url IS ?15
                AND transcript_url IS ?16 AND chapters_url IS ?17 AND transcripts IS ?18,
                enclosure_url
            FROM episodes WHERE podcast_id = ?1 AND identity = ?2
            """)
        updateAll = try database.statement("""
            UPDATE episodes SET feed_order = ?3, guid = ?4, title = ?5, enclosure_url = ?6, media_type = ?7, declared_length = ?8,
                published = ?9, duration = ?10, season = ?11, episode = ?12, summary = ?13, link = ?14, image_url = ?15,
                transcript_url = ?16, chapters_url = ?17, transcripts = ?18
            WHERE id = ?19
            """)
        updateOrder = try database.statement("UPDATE episodes SET feed_order = ?1 WHERE id = ?2")
        if subscribing {
            progress = Progress(placement: EpisodePlacement(recordingGuids: []))
        } else {
            // Recording identities start with `guid:`: a range of the identity index, not a scan.
            progress = Progress(placement: EpisodePlacement(recordingGuids: try database.statement("""
                SELECT DISTINCT guid FROM episodes
                WHERE podcast_id = ?1 AND identity >= 'guid:' AND identity < 'guid;' AND guid IS NOT NULL AND identity != guid
                """).query([podcastID]) { $0.text(0) ?? "" }))
        }
    }

    deinit {
        // Statements are cached by the database: leave them reset, holding no value and no read.
        for statement in [insert, lookup, updateAll, updateOrder] { try? statement.bind([]) }   // resetting cannot fail in a way that matters here
    }

    /// A stored row an identity matched: its id and place, whether its metadata equals the item's,
    /// and its enclosure when that differs.
    struct Stored: StoredRecording {
        var id: Int
        var order: Int
        var sameMetadata: Bool
        var sameEnclosure: Bool
        /// The stored enclosure URL when it is not the item's (nil when it is, or when there is none).
        var otherEnclosure: String?
    }

    /// Writes one batch, in feed order.
    func write(_ batch: [ParsedEpisode]) throws {
        for episode in batch {
            let order = progress.order
            progress.order += 1
            var values = Self.values(of: episode, podcastID: podcastID, order: order)
            if subscribing {
                try run(insert, values)
                progress.added += 1
                continue
            }
            switch try progress.placement.place(episode, stored: { try stored($0, values: values) }) {
            case .row(let identity, let stored):
                values[1] = identity
                try write(values, order: order, over: stored)
            case .waiting:
                values[1] = Self.waitingIdentity(order)
                try run(insert, values)
                progress.waiting += 1
            case .leftOut:
                progress.leftOut += 1
            }
        }
    }

    /// Inserts `values`, or updates `stored` when the item changed it (a changed place alone is
    /// saved, but is not an update the user hears of).
    func write(_ values: [SQLValueConvertible], order: Int, over stored: Stored?) throws {
        guard let stored else {
            try run(insert, values)
            progress.added += 1
            return
        }
        if !stored.sameMetadata {
            try run(updateAll, values + [stored.id])
            progress.updated += 1
        } else if order != stored.order {
            try run(updateOrder, [order, stored.id])
        }
    }

    /// The row stored under `identity` for this podcast, compared with `values`.
    func stored(_ identity: String, values: [SQLValueConvertible]) throws -> Stored? {
        var values = values
        values[1] = identity
        return try lookup.first(values) { row in
            let sameEnclosure = row.bool(2)
            return Stored(id: row.int(0), order: row.int(1), sameMetadata: row.bool(3), sameEnclosure: sameEnclosure,
                          otherEnclosure: sameEnclosure ? nil : row.text(4))
        }
    }

    private func run(_ statement: Statement, _ values: [SQLValueConvertible]) throws {
        try statement.bind(values)
        while try statement.step() {}
    }

    /// The statements' parameters ?1 to ?18 for `episode`, under its own identity.
    static func values(of episode: ParsedEpisode, podcastID: Int, order: Int) -> [SQLValueConvertible] {
        [podcastID, episode.identity, order, episode.guid, episode.title, episode.enclosureURL?.absoluteString, episode.mediaType,
         episode.declaredLength, episode.published, episode.duration, episode.season, episode.episodeNumber, episode.summary,
         episode.link?.absoluteString, episode.imageURL?.absoluteString, episode.transcriptURL?.absoluteString,
         episode.chaptersURL?.absoluteString, transcriptsColumn(episode.transcripts)]
    }

    /// The `transcripts` column: a JSON array of `{url, type, language, rel}`, NULL when the item has none.
    static func transcriptsColumn(_ transcripts: [ParsedEpisode.Transcript]) -> String? {
        guard !transcripts.isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // URLs and strings always encode: the nil case is unreachable, and NULL reads as "none".
        return (try? encoder.encode(transcripts)).map { String(decoding: $0, as: UTF8.self) }
    }
}
