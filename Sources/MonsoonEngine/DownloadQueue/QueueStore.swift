import FoundationEssentials

/// The engine's queue as a store, seen whole: every client's interface at once. `DownloadStore`
/// (SQLite) is one, checked by the conformance suite (`QueueStoreConformanceTests`); the engine,
/// which serves all of them, holds one.
///
/// Other clients ask for only the part they use, after GRDB's split of readers and writers:
/// - `QueuePersistence` and `QueueNotes`: the engine's own rows and notes;
/// - `QueueCommands`: commands and additions between processes;
/// - `QueueListing` and `QueueHousekeeping`: what listings read, and what a command changes
///   while no engine runs;
/// - `DownloadStateReading`: the states of downloads, for those who follow the queue.
///
/// They are written for a database across a network too:
/// - reads and deletions take lists of ids and answer in one call (an implementation
///   batches them: one statement per chunk of ids, never one per id);
/// - no signature names a type of SQLite's, and no caller passes SQL;
/// - nothing assumes that other tables (the podcast library's) live in the same database:
///   a caller that needs both reads its own rows, then asks here for the downloads of their ids.
///
/// Rows are keyed by id and by sequence number (enqueue order): writes name both, so a save
/// queued for a download that was removed and added again under the same id changes nothing.
///
/// - Important: confined to one thread at a time, like a database connection.
package typealias QueueStore = QueuePersistence & QueueNotes & QueueCommands & QueueListing & QueueHousekeeping & DownloadStateReading
