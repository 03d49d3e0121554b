import FoundationEssentials
import Synchronization
import MonsoonEngine

/// `--report FILE`: a JSON report of a run for benchmarks: overall and per host, bytes,
/// wall time, throughput, time-to-first-byte percentiles, failed attempts by status,
/// resumed bytes, and connections opened versus reused; and for its page (`RunPage`), each
/// download's phases and attempts and the bytes over time (`RunTimeline`).
final class RunReport: Sendable {
    private struct Tally {
        var bytes = 0
        var attempts = 0
        var completed = 0
        var firstBytes: [Double] = []
        var failures: [String: Int] = [:]
        var resumedBytes = 0
        var opened = 0
        var reused = 0
    }

    private struct State {
        var overall = Tally()
        var hosts: [String: Tally] = [:]
        var timeline: RunTimeline
        var skipped: [String: Int] = [:]
    }

    private let state: Mutex<State>
    let started: Date

    /// `started`, and the times below, given by tests that build a run of their own.
    init(started: Date = Date()) {
        self.started = started
        state = Mutex(State(timeline: RunTimeline(start: started)))
    }

    /// Takes in an event of the run: attempts count, status changes make the timeline.
    func observe(_ event: DownloadEvent, at now: Date = Date()) {
        if case .progress = event { return }   // the timeline's throughput comes from attempts
        state.withLock { state in
            state.timeline.observe(event, at: now)
            guard case .attempt(let attempt) = event else { return }
            Self.add(attempt, to: &state.overall)
            Self.add(attempt, to: &state.hosts[attempt.host, default: Tally()])
        }
    }

    /// What the run did not download, by why (`ArchiveRun.Plan.skips`): counted on its page, not drawn.
    func skipped(_ counts: [String: Int]) {
        state.withLock { $0.skipped.merge(counts, uniquingKeysWith: +) }
    }

    private static func add(_ attempt: AttemptReport, to tally: inout Tally) {
        tally.attempts += 1
        tally.bytes += attempt.bytes
        if let ttfb = attempt.timeToFirstByte { tally.firstBytes.append(ttfb) }
        if let error = attempt.error {
            // An error status by its number; a failure after a good status (a dropped body) by its kind.
            tally.failures[attempt.status >= 400 ? String(attempt.status) : error.code.rawValue, default: 0] += 1
        } else if attempt.status >= 200 && attempt.status < 300 || attempt.status == 416 {
            tally.completed += 1
        }
        if attempt.resumedFrom > 0 { tally.resumedBytes += attempt.resumedFrom }
        if attempt.newConnections > 0 {
            tally.opened += attempt.newConnections
        } else if attempt.status > 0 {   // no response and no new connection: none was made at all
            tally.reused += 1
        }
    }

    /// The report as JSON text; `command` names the run.
    func text(command: String, ended: Date = Date()) -> String {
        let wall = max(0.000_001, ended.timeIntervalSince(started))
        return state.withLock { state in
            var hosts: [String] = []
            for host in state.hosts.keys.sorted() {
                hosts.append("\(JSONText.string(host)): \(Self.json(state.hosts[host] ?? Tally(), wall: wall))")
            }
            return "{\"command\": \(JSONText.string(command)), \"started\": \(LibraryJSON.timestamp(started)), \"ended\": \(LibraryJSON.timestamp(ended)), "
                + "\"wallSeconds\": \(JSONText.number(wall)),\n \"overall\": \(Self.json(state.overall, wall: wall)),\n \"hosts\": {\(hosts.joined(separator: ",\n  "))},\n "
                + state.timeline.jsonMembers(wall: wall) + ",\n \"skipped\": {"
                + state.skipped.keys.sorted().map { "\(JSONText.string($0)): \(state.skipped[$0] ?? 0)" }.joined(separator: ", ") + "}}\n"
        }
    }

    private static func json(_ tally: Tally, wall: Double) -> String {
        let sorted = tally.firstBytes.sorted()
        func percentile(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "null" }
            return JSONText.number(sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))])
        }
        let failures = tally.failures.keys.sorted().map { "\(JSONText.string($0)): \(tally.failures[$0] ?? 0)" }.joined(separator: ", ")
        return "{\"bytes\": \(tally.bytes), \"throughputBytesPerSecond\": \(JSONText.number((Double(tally.bytes) / wall).rounded())), "
            + "\"attempts\": \(tally.attempts), \"completedAttempts\": \(tally.completed), "
            + "\"timeToFirstByteSeconds\": {\"p50\": \(percentile(0.5)), \"p90\": \(percentile(0.9)), \"p99\": \(percentile(0.99))}, "
            + "\"failedAttemptsByStatus\": {\(failures)}, \"resumedBytes\": \(tally.resumedBytes), "
            + "\"connections\": {\"opened\": \(tally.opened), \"reused\": \(tally.reused)}}"
    }
}
