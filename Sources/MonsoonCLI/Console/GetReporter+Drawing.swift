import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// The live block on a terminal (`LiveBlock`): a line per active download (at most 8) and the
/// run's line.
extension GetReporter {
    /// A line above the live block (which is cleared first), in an ANSI colour when given.
    func emitLine(_ state: inout State, _ line: String, toErrors: Bool, color: String? = nil) {
        if live { state.block.clear(context) }
        let target = toErrors ? context.errors : context.output
        guard let color else { return target.line(line) }
        target.writeVerbatim(paint(TerminalText.escape(line, keepingLayout: false), color) + "\n")
    }

    func draw(_ state: inout State) {
        let now = Date()
        let width = max(20, context.terminalWidth - 1)
        var lines: [String] = []
        let active = state.rows.filter { !$0.value.removed && ($0.value.status == .downloading || $0.value.status == .waitingToRetry) }
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
            if lines.count < 8 { lines.append(render(row, now: now, width: width)) }
        }
        if active.count > 8 { lines.append("  … and \(active.count - 8) more") }
        let left = Self.bytesLeft(state.rows.values)
        let queued = state.rows.values.filter { !$0.removed && $0.status == .queued }.count
        let failed = state.rows.values.filter { !$0.removed && $0.status == .failed }.count
        // The run's line, in parts a narrow terminal does without first (the counts of active and
        // queued, the speed, the bytes left), so the ETA and what it leaves out stay in sight.
        var parts: [(text: String, drop: Int)] = [("\(state.completed + state.alreadyThere)/\(state.expected + state.notURLs) done", 0)]
        if failed > 0 { parts.append(("\(failed) failed", 0)) }
        parts += [("\(active.count) active", 4), ("\(queued) queued", 3)]
        if left.bytes > 0 { parts.append(("\(ByteCount.format(left.bytes)) left", 1)) }
        parts.append(("\(ByteCount.format(Int(totalSpeed)))/s", 2))
        if let eta = Self.eta(left.bytes, speed: totalSpeed) { parts.append(("ETA \(eta)", 0)) }
        if left.unknown > 0 { parts.append(("\(left.unknown) size\(left.unknown == 1 ? "" : "s") unknown", 0)) }
        var summary = parts.map(\.text).joined(separator: " · ")
        for level in [4, 3, 2, 1] where TerminalText.displayWidth(summary) > width {
            parts.removeAll { $0.drop == level }
            summary = parts.map(\.text).joined(separator: " · ")
        }
        let shown = lines.map { TerminalText.clip(TerminalText.escape($0, keepingLayout: false), width: width) } + [TerminalText.clip(summary, width: width)]
        state.block.show(shown, context) { $0 == shown.count - 1 ? paint($1, "1") : $1 }
    }

    /// What the downloads still to do need, running or queued: the size a server gave, else the
    /// feed's (or the queue's) length, less what is there; `unknown` counts those with neither.
    static func bytesLeft(_ rows: some Sequence<Row>) -> (bytes: Int, unknown: Int) {
        var bytes = 0
        var unknown = 0
        for row in rows where !row.removed && (row.status == .downloading || row.status == .waitingToRetry || row.status == .queued) {
            if let size = row.total ?? row.expectedSize {
                bytes += max(0, size - row.bytes)
            } else {
                unknown += 1
            }
        }
        return (bytes, unknown)
    }

    /// `text` in an ANSI colour (SGR `code`) when colours are on.
    func paint(_ text: String, _ code: String) -> String {
        colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// "1:05" or "2:03:04" for the time `remaining` bytes take at `speed`; nil when unknown.
    static func eta(_ remaining: Int, speed: Double) -> String? {
        guard remaining > 0, speed > 1 else { return nil }
        let seconds = Int((Double(remaining) / speed).rounded(.up))
        guard seconds < 100 * 3600 else { return nil }
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return seconds >= 3600 ? "\(seconds / 3600):\(two(seconds % 3600 / 60)):\(two(seconds % 60))" : "\(seconds / 60):\(two(seconds % 60))"
    }

    /// A download's line: its name (cut in the middle, from a third of the width up to 40
    /// columns), then its bar, sizes, speed and time left, or why it waits.
    private func render(_ row: Row, now: Date, width: Int) -> String {
        // What follows the name takes about 62 columns with the bar, 45 without.
        // Escaped before it is cut: an escape takes columns too.
        let name = TerminalText.fit(TerminalText.escape(row.name, keepingLayout: false), width: max(10, min(40, width - (width < 70 ? 45 : 62))))
        if row.status == .waitingToRetry {
            let wait = row.retryAt.map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) } ?? 0
            return "  \(name)  retry in \(wait) s: \(row.error?.message ?? "")"
        }
        if row.bytes == 0 && row.total == nil {
            return "  \(name)  connecting…"
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
        let eta = row.total.flatMap { Self.eta($0 - row.bytes, speed: row.speed) }.map { "  ETA \($0)" } ?? ""
        // Below 70 columns the bar gives way to the numbers.
        return "  \(name)\(width < 70 ? "" : " [\(bar)]") \(percent)%  \(size)  \(ByteCount.format(Int(row.speed)))/s\(eta)"
    }

    /// The name a row shows: the episode's title (an episode download carries it), else the
    /// file's name once it has one, else the last part of its URL.
    static func name(of download: Download) -> String {
        if let title = title(of: download.request) { return title }
        if let path = download.filePath { return path.fileName }
        if case .file(let path) = download.request.destination { return path.fileName }
        return name(of: download.request.url)
    }

    static func title(of request: DownloadRequest) -> String? {
        guard let title = request.userInfo[EpisodeQueue.titleKey], !title.isEmpty else { return nil }
        return title
    }

    static func name(of url: URL) -> String {
        let last = url.lastPathComponent
        return last.isEmpty || last == "/" ? url.host ?? "download" : last
    }

    static func duration(_ seconds: Double) -> String {
        if seconds < 60 { return String(cFormat: "%.1f s", seconds) }
        return "\(Int(seconds) / 60) min \(Int(seconds) % 60) s"
    }
}
