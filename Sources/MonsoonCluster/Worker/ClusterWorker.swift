import Foundation
import MonsoonEngine
import MonsoonPodcasts

/// `monsoon worker`: claims jobs from the shared queue and runs them until stopped.
///
/// Everything that touches PostgreSQL runs in one task on a thread of its own (libpq blocks),
/// never on Swift's cooperative pool; downloads run in the engine, whose events come back to
/// that task as messages. A dedicated listener thread turns notifications into wake-ups, and a
/// timer wakes the worker every `pollSeconds` too (the only wake-up behind a transaction pooler).
public final class ClusterWorker: Sendable {
    public let configuration: WorkerConfiguration

    enum Event: Sendable {
        /// New jobs may be there (a notification, the poll timer, a slot freed).
        case wake
        /// Time to renew, take back expired leases and retry what waits for the database.
        case tick
        /// The engine finished (or gave up on) one of the worker's downloads.
        case finished(Download)
        /// Time to record the downloads that finished (batched over a few milliseconds).
        case flush
        /// A refresh job's outcome, run in a task of its own.
        case refreshed(Lease, Result<ClusterRefresh.Outcome, Error>)
        /// Where a download would go: the answer to a HEAD that follows no redirect.
        case probed(Lease, Result<FetchResponse, DownloadError>)
        case stop
    }

    private let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    public init(configuration: WorkerConfiguration) {
        self.configuration = configuration
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
    }

    /// Asks the worker to stop: it hands its jobs back, fenced, and `run` returns.
    public func stop() {
        continuation.yield(.stop)
    }

    /// Runs until `stop()`.
    /// - Throws: `PostgresError` when the database cannot be reached at the start, or its schema
    ///   is missing (`cluster init`) or newer than this Monsoon.
    public func run() async throws -> WorkerSummary {
        try await withTaskExecutorPreference(DatabaseExecutor(label: "monsoon.worker")) {
            let session = try WorkerSession(configuration: configuration, events: continuation)
            return await session.run(events)
        }
    }
}
