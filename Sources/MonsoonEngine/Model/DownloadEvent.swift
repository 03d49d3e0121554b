/// What happened to a download.
///
/// `@nonexhaustive` (SE-0487): the engine will report more kinds of events, so a `switch`
/// outside this package needs a `default` (or `@unknown default`), and a new kind breaks no one.
@nonexhaustive
public enum DownloadEvent: Sendable, Equatable {
    // The snapshots are boxed: an event is then a few words, not a whole `Download`, wherever
    // events wait for a slow reader (`EventSubscriber`'s buffer).
    /// A download joined the queue: enqueued here, or added to the store by another process.
    indirect case added(Download)
    /// Coalesced: at most about ten a second per download, and the only kind a
    /// slow consumer may miss (it then sees the newest).
    case progress(id: DownloadID, bytes: Int, total: Int?)
    /// A download moved to another status; the snapshot is taken after the change.
    indirect case statusChanged(Download)
    /// A download was removed from the queue.
    case removed(DownloadID)
    /// A request of the download ended (it may be retried: `statusChanged` says).
    indirect case attempt(AttemptReport)

    /// Which events a subscription wants (`DownloadManager.events(_:)`): the engine builds no
    /// event of a kind nobody asked for.
    public struct Kinds: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        public static let added = Kinds(rawValue: 1 << 0)
        public static let progress = Kinds(rawValue: 1 << 1)
        public static let statusChanged = Kinds(rawValue: 1 << 2)
        public static let removed = Kinds(rawValue: 1 << 3)
        public static let attempt = Kinds(rawValue: 1 << 4)
        public static let all: Kinds = [.added, .progress, .statusChanged, .removed, .attempt]
    }

    public var kind: Kinds {
        switch self {
        case .added: .added
        case .progress: .progress
        case .statusChanged: .statusChanged
        case .removed: .removed
        case .attempt: .attempt
        }
    }

    public var downloadID: DownloadID {
        switch self {
        case .added(let download), .statusChanged(let download): return download.id
        case .progress(let id, _, _), .removed(let id): return id
        case .attempt(let report): return report.id
        }
    }
}
