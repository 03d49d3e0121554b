/// Which downloads of a persistent queue an engine starts.
///
/// A queue in a database is shared: one process runs it at a time, but others add to it.
/// `monsoon download` runs all of it; `monsoon get` runs only its own URLs and leaves
/// the rest queued for a later run.
///
/// `@nonexhaustive`: more scopes may come (a queue shared by machines), so a `switch`
/// outside this package needs a `default`.
@nonexhaustive
public enum QueueScope: Sendable, Equatable {
    /// Every queued download, whoever added it.
    case wholeQueue
    /// Only downloads enqueued through this manager, or handed to it with
    /// `DownloadManager.claim(_:)` (or a `.claim` command from another process).
    /// The others are restored and may be paused, removed or listed, but never started.
    case claimedOnly
}
