import FoundationEssentials
import MonsoonStore

/// Which row each item of a feed is stored in.
///
/// An item is stored under its own identity (``ParsedEpisode/identity``), except among items that share a guid: the
/// parser gives the first the plain guid, and later ones the guid with their enclosure. Which comes first can change
/// between refreshes (a new recording that re-uses an old guid goes on top), so an item goes to the row that already
/// holds its recording; otherwise the plain guid would move to the new item, overwrite the old one's row (and its user
/// state), and the old one would be added again. An item alone with its guid keeps it even when its enclosure changed:
/// the same episode, re-uploaded.
///
/// Decided item by item (``EpisodePlacement``), with lookups in the identity index:
/// - A later item of a re-used guid takes its recording's row, else the plain guid's row when that holds its
///   recording, else a new row.
/// - The first item of a guid takes a stored row of its recording, else the plain guid's row when that is new, holds
///   no enclosure, or holds the same recording.
/// - Otherwise whether it is the plain row's episode re-uploaded or a new recording above the old one depends on a
///   later item: it waits in a row of its own under a placeholder identity for ``EpisodeWriter/finish()``, then takes
///   the plain guid's row unless a later item took it back, and else keeps its own under its recording identity.
///
/// Never two items under one identity: an item whose own identity another item took is left out (only a feed whose
/// guids imitate recording identities, `guid:…|enclosure:…`, can get there).
extension EpisodeWriter {
    /// No real identity starts with a space (guids are trimmed; the others are URLs, `title:…` or `guid:…`).
    static func waitingIdentity(_ order: Int) -> String { " waiting \(order)" }

    /// Settles the items that waited: first those of guids a later item took back, each a recording of its own (few);
    /// then all the others at once, in SQL, each its plain guid's episode re-uploaded.
    func finish() throws {
        guard progress.waiting > 0 else { return }
        for guid in progress.placement.plainTaken.sorted() {
            for row in try EpisodeRecord.waiting(podcast: podcastID, guid: guid, in: database) {
                let settlement = try progress.placement.settle(guid: guid, enclosure: row.enclosure) { recording in
                    try EpisodeRecord.exists(podcast: podcastID, identity: recording, in: database)
                }
                guard case .recording(let recording) = settlement else {
                    try EpisodeRecord.delete(row.id, in: database)
                    progress.leftOut += 1
                    continue
                }
                try EpisodeRecord.setIdentity(recording, of: row.id, in: database)
                progress.added += 1
            }
        }
        let settled = try EpisodeRecord.settleWaiting(podcast: podcastID, in: database)
        progress.updated += settled.updated
        progress.added += settled.added
        progress.waiting = 0
    }
}
