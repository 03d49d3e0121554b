import FoundationEssentials
import MonsoonStore

/// Writes a feed's episodes into the library a batch at a time as a parse hands them out, inside the caller's
/// transaction: a known episode is found by one lookup in the `(podcast_id, identity)` index (the known episodes are
/// never all loaded) and updated when the feed changed its metadata. The user's state is never written here.
///
/// Which row an item belongs to is decided as it comes (`EpisodeWriter+Identities.swift`); only items whose decision
/// depends on items still to come wait for the end of the feed, in the database.
///
/// - Important: inside one transaction, from one task; ``finish()`` must be called after the last batch.
final class EpisodeWriter {
    /// Kept apart so a later page that fails can be undone with its savepoint: the caller saves it before the page and
    /// puts it back after a rollback.
    struct Progress {
        /// The next episode's place among all the pages' kept items.
        var order = 0
        var added = 0
        var updated = 0
        /// The identity they would be stored under was taken (``EpisodePlacement``).
        var leftOut = 0
        /// ``EpisodePlacement/Decision/waiting``.
        var waiting = 0
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

    init(database: Database, podcastID: Int, subscribing: Bool) throws {
        self.database = database
        self.podcastID = podcastID
        self.subscribing = subscribing
        insert = try database.statement(EpisodeRecord.insertSQL)
        lookup = try database.statement(EpisodeRecord.lookupSQL)
        updateAll = try database.statement(EpisodeRecord.updateSQL)
        updateOrder = try database.statement(EpisodeRecord.updateOrderSQL)
        let guids = subscribing ? [] : try EpisodeRecord.recordingGUIDs(podcast: podcastID, in: database)
        progress = Progress(placement: EpisodePlacement(recordingGuids: guids))
    }

    deinit {
        // Statements are cached by the database: leave them reset, holding no value and no read.
        for statement in [insert, lookup, updateAll, updateOrder] { try? statement.bind([]) }   // resetting cannot fail in a way that matters here
    }

    /// A stored row an identity matched.
    struct Stored: StoredRecording {
        var id: Int
        var order: Int
        var sameMetadata: Bool
        var sameEnclosure: Bool
        /// The stored enclosure URL when it is not the item's (nil when it is, or when there is none).
        var otherEnclosure: String?
    }

    /// In feed order.
    func write(_ batch: [ParsedEpisode]) throws {
        for episode in batch {
            let order = progress.order
            progress.order += 1
            var values = EpisodeRecord.feedValues(of: episode, podcast: podcastID, order: order)
            if subscribing {
                try run(insert, values)
                progress.added += 1
                continue
            }
            switch try progress.placement.place(episode, stored: { try stored($0, values: values) }) {
            case .row(let identity, var stored):
                values[1] = identity
                // Stored by the parser before issue 50: the row is re-keyed by the update (which sets the identity).
                if stored == nil, let former = episode.formerIdentity { stored = try self.stored(former, values: values) }
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

    /// A changed place alone is saved, but is not an update the user hears of.
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

    func stored(_ identity: String, values: [SQLValueConvertible]) throws -> Stored? {
        var values = values
        values[1] = identity
        return try lookup.first(values, reading: EpisodeRecord.Lookup.self) { row in
            let sameEnclosure = row.bool(.sameEnclosure)
            return Stored(id: row.int(.id), order: row.int(.feedOrder), sameMetadata: row.bool(.sameMetadata), sameEnclosure: sameEnclosure,
                          otherEnclosure: sameEnclosure ? nil : row.text(.enclosureURL))
        }
    }

    private func run(_ statement: Statement, _ values: [SQLValueConvertible]) throws {
        try statement.bind(values)
        while try statement.step() {}
    }

    /// A JSON array of `{url, type, language, rel}`, NULL when the item has none.
    static func transcriptsColumn(_ transcripts: [ParsedEpisode.Transcript]) -> String? {
        guard !transcripts.isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // URLs and strings always encode: the nil case is unreachable, and NULL reads as "none".
        return (try? encoder.encode(transcripts)).map { String(decoding: $0, as: UTF8.self) }
    }
}
