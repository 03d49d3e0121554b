import Foundation
import MonsoonPodcasts
import MonsoonEngine

/// Shows what `monsoon get` is doing: live progress on a terminal, one plain
/// line per finished download otherwise, failures on standard error.
final class GetReporter: Sendable {
    private struct Row {
        var name: String
        var url: URL
        var status: DownloadStatus = .queued
        var bytes = 0
        var total: Int?
        var error: DownloadError?
        var retryAt: Date?
        /// For the speed: bytes at the previous sample, and when.
        var sampleBytes = 0
        var sampleTime = Date()
        var speed: Double = 0
    }

    private struct State {
        var rows: [DownloadID: Row] = [:]
        var completed = 0
        var failed = 0
        var diskFull = false
        var drawnLines = 0
        var started = Date()
        var finishedBytes = 0
    }

    private let context: CommandContext
    private let quiet: Bool
    private let verbose: Bool
    private let total: Int
    private let state = Locked(State())
    private let live: Bool

    init(context: CommandContext, quiet: Bool, verbose: Bool, total: Int) {
        self.context = context
        self.quiet = quiet
        self.verbose = verbose
        self.total = total
        live = context.isTerminal && !quiet
    }

    func handle(_ event: DownloadEvent) {
        state.withLock { state in
            switch event {
            case .added(let download):
                state.rows[download.id] = Row(name: Self.name(of: download), url: download.request.url)
            case .progress(let id, let bytes, let total):
                state.rows[id]?.bytes = bytes
                state.rows[id]?.total = total
            case .statusChanged(let download):
                update(&state, with: download)
            case .removed(let id):
                state.rows[id] = nil
            }
        }
    }

    private func update(_ state: inout State, with download: Download) {
        var row = state.rows[download.id] ?? Row(name: Self.name(of: download), url: download.request.url)
        let previous = row.status
        row.status = download.status
        row.bytes = download.bytes
        row.total = download.total ?? row.total
        row.name = Self.name(of: download)
        row.error = download.lastError
        row.retryAt = download.retryAt
        state.rows[download.id] = row
        guard previous != download.status else { return }
        switch download.status {
        case .completed:
            state.completed += 1
            state.finishedBytes += download.bytes
            if !quiet {
                let path = download.filePath ?? row.name
                emitLine(&state, live ? "✓ \(row.name)  \(ByteCount.format(download.bytes))" : "\(path)\t\(download.bytes)", toErrors: false)
            }
        case .failed:
            state.failed += 1
            if download.lastError?.code == .notEnoughDiskSpace { state.diskFull = true }
            emitLine(&state, "monsoon: failed: \(Redaction.redact(download.request.url)): \(download.lastError?.message ?? "unknown error")", toErrors: true)
        case .waitingToRetry where verbose:
            let wait = download.retryAt.map { max(0, Int($0.timeIntervalSinceNow.rounded(.up))) } ?? 0
            emitLine(&state, "monsoon: retrying \(Redaction.redact(download.request.url)) in \(wait) s: \(download.lastError?.message ?? "")", toErrors: true)
        default:
            break
        }
        if live { draw(&state) }
    }

    /// Redraws the live block (terminal only); called a few times a second.
    func redraw() {
        guard live else { return }
        state.withLock { draw(&$0) }
    }

    /// The last word: on a terminal, clears the block and prints a summary.
    func finish(interrupted: Bool) {
        state.withLock { state in
            if live { clearBlock(&state) }
            guard !quiet || interrupted else { return }
            let elapsed = max(0.001, Date().timeIntervalSince(state.started))
            var summary = "\(state.completed) of \(total) downloaded"
            if state.failed > 0 { summary += ", \(state.failed) failed" }
            summary += " (\(ByteCount.format(state.finishedBytes)) in \(Self.duration(elapsed)))"
            if interrupted { summary = "interrupted: part files kept; run the same command again to resume. " + summary }
            if live || interrupted || state.failed > 0 {
                context.errors.line(live && !interrupted ? summary : "monsoon: \(summary)")
            }
        }
    }

    func exitStatus(invalidInputs: Int) -> Int32 {
        state.withLock { state in
            if state.diskFull { return ExitStatus.diskFull }
            return state.failed > 0 || invalidInputs > 0 ? ExitStatus.failure : ExitStatus.success
        }
    }

    // MARK: - Drawing

    private func emitLine(_ state: inout State, _ line: String, toErrors: Bool) {
        if live { clearBlock(&state) }
        (toErrors ? context.errors : context.output).line(line)
    }

    private func clearBlock(_ state: inout State) {
        guard state.drawnLines > 0 else { return }
        context.output.write("\u{1B}[\(state.drawnLines)A\u{1B}[J")
        state.drawnLines = 0
    }

    private func draw(_ state: inout State) {
        let now = Date()
        var lines: [String] = []
        let active = state.rows.filter { $0.value.status == .downloading || $0.value.status == .waitingToRetry }
            .sorted { Int($0.key.rawValue.drop { !$0.isNumber }) ?? 0 < Int($1.key.rawValue.drop { !$0.isNumber }) ?? 0 }
        var totalSpeed = 0.0
        for (id, var row) in active {
            let interval = now.timeIntervalSince(row.sampleTime)
            if interval >= 0.5 {
                let instant = Double(max(0, row.bytes - row.sampleBytes)) / interval
                row.speed = row.speed == 0 ? instant : row.speed * 0.5 + instant * 0.5
                row.sampleBytes = row.bytes
                row.sampleTime = now
                state.rows[id] = row
            }
            totalSpeed += row.speed
            if lines.count < 8 { lines.append(render(row, now: now)) }
        }
        if active.count > 8 { lines.append("  … and \(active.count - 8) more") }
        let queued = state.rows.values.filter { $0.status == .queued }.count
        var summary = "\(state.completed)/\(total) done"
        if state.failed > 0 { summary += " · \(state.failed) failed" }
        summary += " · \(active.count) active · \(queued) queued · \(ByteCount.format(Int(totalSpeed)))/s"
        lines.append(summary)
        clearBlock(&state)
        let width = max(20, context.terminalWidth - 1)
        context.output.write(lines.map { Self.clip($0, width) + "\n" }.joined())
        state.drawnLines = lines.count
    }

    private func render(_ row: Row, now: Date) -> String {
        if row.status == .waitingToRetry {
            let wait = row.retryAt.map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) } ?? 0
            return "  \(Self.pad(row.name, 28))  retry in \(wait) s: \(row.error?.message ?? "")"
        }
        if row.bytes == 0 && row.total == nil {
            return "  \(Self.pad(row.name, 28))  connecting…"
        }
        let size = row.total.map { "\(ByteCount.format(row.bytes)) / \(ByteCount.format($0))" } ?? ByteCount.format(row.bytes)
        var bar = "??????????"
        var percent = "  ?"
        if let total = row.total, total > 0 {
            let fraction = min(1, Double(row.bytes) / Double(total))
            let filled = Int(fraction * 10)
            bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 10 - filled)
            percent = String(Int(fraction * 100))
            percent = String(repeating: " ", count: max(0, 3 - percent.count)) + percent
        }
        return "  \(Self.pad(row.name, 28)) [\(bar)] \(percent)%  \(size)  \(ByteCount.format(Int(row.speed)))/s"
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        if text.count > width { return String(text.prefix(width - 1)) + "…" }
        return text + String(repeating: " ", count: width - text.count)
    }

    private static func clip(_ text: String, _ width: Int) -> String {
        text.count > width ? String(text.prefix(width - 1)) + "…" : text
    }

    private static func name(of download: Download) -> String {
        if let path = download.filePath { return (path as NSString).lastPathComponent }
        let last = download.request.url.lastPathComponent
        return last.isEmpty || last == "/" ? download.request.url.host ?? "download" : last
    }

    private static func duration(_ seconds: Double) -> String {
        if seconds < 60 { return String(format: "%.1f s", seconds) }
        return "\(Int(seconds) / 60) min \(Int(seconds) % 60) s"
    }
}
