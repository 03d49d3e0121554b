import FoundationEssentials
import Dispatch
import MonsoonCluster
import MonsoonEngine

/// What `monsoon worker` shows while it runs: on a terminal, one live line (jobs done, failed,
/// running, speed) under the worker's messages, redrawn at most four times a second; with
/// `--json`, one JSON object per line for each job done or failed, its progress at each tick
/// while it works, and its stop; otherwise (a pipe, `--quiet`) its messages only.
final class WorkerView: Sendable {
    enum Style: Sendable { case live, json, plain }

    private struct State {
        var block = LiveBlock()
        var progress = WorkerProgress()
        /// The last progress written as JSON: an idle worker writes no more of the same.
        var told: WorkerProgress?
    }

    let context: CommandContext
    let style: Style
    let name: String
    private let state = Locked(State())
    private let colors: Bool
    /// JSON lines go out from a queue of their own: the worker's database thread never waits for
    /// a reader that lags (a script that reads only at the end, as `make bench-cluster` does),
    /// until `backlogLimit` bytes wait; then it does, rather than hold ever more in memory.
    private let writer = DispatchQueue(label: "monsoon.worker.json")
    private let backlog = Locked(0)
    static let backlogLimit = 64 << 20

    init(context: CommandContext, name: String, json: Bool, quiet: Bool) {
        self.context = context
        self.name = name
        style = json ? .json : context.isTerminal && !quiet ? .live : .plain
        colors = style == .live && (context.environment["NO_COLOR"] ?? "").isEmpty
    }

    /// A message of the worker's (`WorkerConfiguration.report`). On the live line's terminal, it
    /// takes the line's place and goes out with the line drawn below it, in one write; standard
    /// error elsewhere leaves the live line alone.
    func message(_ line: String) {
        state.withLock { state in
            guard style == .live, context.errors.sharesTerminal(with: context.output) else { return context.errors.line("monsoon: " + line) }
            draw(&state, above: [TerminalText.escape("monsoon: " + line, keepingLayout: false)])
        }
    }

    func observe(_ activity: WorkerActivity) {
        state.withLock { state in
            switch activity {
            case .completed(let job, let path, let bytes):
                state.progress.completed += 1
                state.progress.bytes += bytes
                if style == .json { line("completed", [("job", String(job)), ("path", JSONText.string(path)), ("bytes", String(bytes))]) }
            case .failed(let job, let url, let reason, let retrying):
                state.progress.failed += 1
                if style == .json {
                    line("failed", [("job", String(job)), ("url", JSONText.string(url)), ("reason", JSONText.string(reason)), ("retrying", String(retrying))])
                }
            case .progress(let progress):
                state.progress = progress
                // An idle worker's progress does not change: one line says it, not one a tick.
                if style == .json, progress != state.told {
                    state.told = progress
                    line("progress", [("completed", String(progress.completed)), ("failed", String(progress.failed)),
                                      ("refreshed", String(progress.refreshed)), ("running", String(progress.running)),
                                      ("bytes", String(progress.bytes)), ("bytesPerSecond", String(progress.bytesPerSecond))])
                }
            }
            if style == .live, Date().timeIntervalSince(state.block.lastDraw) >= 0.25 { draw(&state) }
        }
    }

    /// At the stop: every JSON line is out, the live line is cleared (and the `^C` the terminal
    /// echoed below it); the summary follows.
    func finish() {
        writer.sync {}
        guard style == .live else { return }
        state.withLock { $0.block.clear(context) }
        context.output.writeVerbatim("\r\u{1B}[K")
    }

    /// "worker rack2: 12 downloaded · 1 failed · 3 running · 2 feeds read · 4.2 MiB/s"
    static func text(_ progress: WorkerProgress, name: String) -> String {
        var parts = ["\(progress.completed) downloaded"]
        if progress.failed > 0 { parts.append("\(progress.failed) failed") }
        parts.append("\(progress.running) running")
        if progress.refreshed > 0 { parts.append("\(progress.refreshed) feed\(progress.refreshed == 1 ? "" : "s") read") }
        parts.append(ByteCount.format(Int(progress.bytesPerSecond)) + "/s")
        return "worker \(name): " + parts.joined(separator: " · ")
    }

    private func draw(_ state: inout State, above: [String] = []) {
        let width = max(20, context.terminalWidth - 1)
        let text = TerminalText.clip(TerminalText.escape(Self.text(state.progress, name: name), keepingLayout: false), width: width)
        state.block.show([text], above: above, context) { [colors] in colors ? "\u{1B}[1m\($1)\u{1B}[0m" : $1 }
    }

    private func line(_ event: String, _ fields: [(String, String)]) {
        let text = GetReporter.jsonLine(event, fields), size = text.utf8.count + 1
        let (output, backlog) = (context.output, self.backlog)
        let write: @Sendable () -> Void = {
            output.line(text)
            backlog.withLock { $0 -= size }
        }
        if backlog.withLock({ $0 += size; return $0 }) > Self.backlogLimit { writer.sync(execute: write) } else { writer.async(execute: write) }
    }
}
