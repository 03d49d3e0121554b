import FoundationEssentials
import MonsoonEngine
import Synchronization
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
        /// Time to renew, maintain the shared queue (if this worker leads) and retry what waits for the database.
        case tick
        /// The engine finished (or gave up on) one of the worker's downloads.
        case finished(Download)
        /// Time to record the downloads that finished (batched over a few milliseconds), unless a flush came since
        /// this one was asked for (its number, counted by ``WorkerSession/flushes``).
        case flush(Int)
        /// A refresh job's outcome, run in a task of its own.
        case refreshed(Lease, Result<ClusterRefresh.Outcome, Error>)
        /// Where a download would go: the answer to a HEAD that follows no redirect.
        case probed(Lease, Result<FetchResponse, DownloadError>)
        /// A job's next request may be due on a host that spaces its requests: ask again.
        case requestDue(Lease)
        /// A download's request was answered (its first body bytes, or the attempt's end).
        case answered(DownloadID)
        case stop
    }

    private let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    /// `stop()` was asked (read while the worker waits for the database to start).
    private let stopping = Mutex(false)

    public init(configuration: WorkerConfiguration) {
        self.configuration = configuration
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
    }

    /// Asks the worker to stop: it hands its jobs back, fenced, and `run` returns.
    public func stop() {
        stopping.withLock { $0 = true }
        continuation.yield(.stop)
    }

    /// Runs until `stop()`. A database that cannot be reached as it starts (down, restarting) is
    /// waited for, tried again after `startRetry`'s waits, and said each time.
    /// - Throws: `PostgresError` when the database refuses the worker (a connection string,
    ///   a password or a database that is wrong), or its schema is missing (`cluster init`) or
    ///   newer than this Monsoon.
    public func run() async throws -> WorkerSummary {
        try await withTaskExecutorPreference(DatabaseExecutor(label: "monsoon.worker")) {
            // curl before the first claim: a worker without it exits (status 1) holding no job.
            CurlPreload().finish()
            var wait = configuration.startRetry.first
            while !stopping.withLock({ $0 }) {
                do {
                    let session = try WorkerSession(configuration: configuration, events: continuation)
                    return await session.run(events)
                } catch let error as PostgresError where error.serverUnavailable {
                    configuration.report("worker \(configuration.name): \(error.message); trying again in \(Self.seconds(wait))")
                    let until = ContinuousClock.now + .milliseconds(Int(wait * 1000))
                    // In slices, so that a stop asked meanwhile ends the wait.
                    while ContinuousClock.now < until, !stopping.withLock({ $0 }) {
                        try? await Task.sleep(for: .milliseconds(min(100, Int(wait * 1000))))   // cancelled: the loop looks again at once
                    }
                    wait = min(configuration.startRetry.most, wait * 2)
                }
            }
            return WorkerSummary()
        }
    }

    /// "0.5 s", "30 s".
    private static func seconds(_ value: Double) -> String {
        value.rounded() == value ? "\(Int(value)) s" : "\(value) s"
    }
}
