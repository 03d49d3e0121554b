import FoundationEssentials
import MonsoonBasics
import MonsoonEngine

/// What a running worker tells whoever runs it (`WorkerConfiguration.observe`): each job it
/// ends, and where it stands at each tick (a live line, JSON lines).
public enum WorkerActivity: Sendable, Hashable {
    /// A download's file is in place and recorded in the ledger; `path` is under the worker's folder.
    case completed(job: Int64, path: String, bytes: Int64)
    /// A download failed: for good, or back in the queue to be tried again later (`retrying`).
    case failed(job: Int64, url: String, reason: String, retrying: Bool)
    case progress(WorkerProgress)
}

/// A worker's counts and speed at one moment.
public struct WorkerProgress: Sendable, Hashable {
    public var completed = 0
    public var failed = 0
    public var refreshed = 0
    /// Jobs it holds now (running, or finished and waiting to be recorded).
    public var running = 0
    /// Bytes of the files it completed.
    public var bytes: Int64 = 0
    /// Bytes a second its transfers received since the last progress, unfinished ones included.
    public var bytesPerSecond: Int64 = 0

    public init() {}

    init(_ summary: WorkerSummary, running: Int, bytesPerSecond: Int64) {
        (completed, failed, refreshed, bytes) = (summary.completed, summary.failed, summary.refreshed, summary.bytes)
        self.running = running
        self.bytesPerSecond = bytesPerSecond
    }
}

/// The body bytes a worker's transfers received, finished or not: counted from the engine's
/// events on the task that forwards them, read by the worker's loop for its speed.
final class ReceivedBytes: Sendable {
    private struct State {
        var total: Int64 = 0
        /// Each transfer's bytes when last heard of, from where it started (past a resumed part).
        var heard: [DownloadID: Int] = [:]
    }

    private let state = Locked(State())

    var value: Int64 { state.withLock { $0.total } }

    /// Adds what `event` says a transfer received since it was last heard of.
    func count(_ event: DownloadEvent) {
        state.withLock { state in
            switch event {
            case .progress(let id, let bytes, _):
                state.total += Int64(max(0, bytes - (state.heard[id] ?? 0)))
                state.heard[id] = bytes
            case .statusChanged(let download) where download.status == .downloading:
                if state.heard[download.id] == nil { state.heard[download.id] = download.bytes }
            case .statusChanged(let download):
                // Done, failed or stopped: what came since the last progress, and no more.
                state.total += Int64(max(0, download.bytes - (state.heard.removeValue(forKey: download.id) ?? download.bytes)))
            default:
                break
            }
        }
    }
}

/// Bytes a second between readings of a running total (`ReceivedBytes`).
struct SpeedMeter {
    private var bytes: Int64 = 0
    private var at = ContinuousClock.now

    /// The rate since the reading before, which this one replaces.
    mutating func read(_ total: Int64) -> Int64 {
        let now = ContinuousClock.now
        defer { (bytes, at) = (total, now) }
        return max(0, Int64(Double(total - bytes) / max(0.001, (now - at) / .seconds(1))))
    }
}
