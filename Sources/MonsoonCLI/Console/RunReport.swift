import Foundation
import Synchronization
import MonsoonEngine

/// `--report FILE`: a JSON report of a run for benchmarks: overall and per host, bytes,
/// wall time, throughput, time-to-first-byte percentiles, failed attempts by status,
/// resumed bytes, and connections opened versus reused.
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
    }

    private let state = Mutex(State())
    let started = Date()

    /// Takes in an event of the run (only attempts count).
    func observe(_ event: DownloadEvent) {
        guard case .attempt(let attempt) = event else { return }
        state.withLock { state in
            Self.add(attempt, to: &state.overall)
            Self.add(attempt, to: &state.hosts[attempt.host, default: Tally()])
        }
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

    /// Writes the report to `path` (atomically); `command` names the run.
    func write(to path: String, command: String) throws {
        let ended = Date()
        let wall = max(0.000_001, ended.timeIntervalSince(started))
        let text = state.withLock { state in
            var hosts: [String] = []
            for host in state.hosts.keys.sorted() {
                hosts.append("\(JSONText.string(host)): \(Self.json(state.hosts[host] ?? Tally(), wall: wall))")
            }
            return "{\"command\": \(JSONText.string(command)), \"started\": \(LibraryJSON.timestamp(started)), \"ended\": \(LibraryJSON.timestamp(ended)), "
                + "\"wallSeconds\": \(JSONText.number(wall)),\n \"overall\": \(Self.json(state.overall, wall: wall)),\n \"hosts\": {\(hosts.joined(separator: ",\n  "))}}\n"
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CLIError(message: "cannot write the report \(path): \(SystemErrorText.reason(error))")
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
