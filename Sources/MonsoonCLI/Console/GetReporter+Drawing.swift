import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// The live block on a terminal (`LiveBlock`): a line per active download (at most 8) and the
/// run's line.
extension GetReporter {
    /// A line above the live block, in an ANSI colour when given. On standard output, it goes out
    /// with the block drawn below it, in one write; on standard error, when that is the terminal
    /// too, it takes the block's first row, and the block is drawn below it at once.
    func emitLine(_ state: inout State, _ line: String, toErrors: Bool, color: String? = nil) {
        guard live else { return (toErrors ? context.errors : context.output).line(line) }
        let text = TerminalText.escape(line, keepingLayout: false)
        guard toErrors else { return draw(&state, above: [color.map { paint(text, $0) } ?? text]) }
        if context.errors.isTerminal {
            state.block.rewind(context)
            context.errors.writeVerbatim(text + "\u{1B}[K\n")
        } else {
            context.errors.line(line)
        }
        draw(&state)
    }

    /// Bytes of download `id` went from `before` to `bytes`: its speed and the run's.
    func arrive(_ state: inout State, _ id: DownloadID, bytes: Int, before: Int) {
        let now = clock()
        state.rows[id]?.bytes = bytes
        state.rows[id]?.rate.add(bytes, at: now)
        state.arrived += max(0, bytes - before)
        state.rate.add(state.arrived, at: now)
    }

    func draw(_ state: inout State, above: [String] = []) {
        let now = clock()
        let width = max(20, context.terminalWidth - 1)
        // A download whose attempt has ended (its file being put in place) gave its slot to the next:
        // it is no longer active, nor is one waiting to retry, so `active` never exceeds `-j`.
        let shown = state.rows.filter { !$0.value.removed && ($0.value.status == .waitingToRetry
                                                              || $0.value.status == .downloading && ($0.value.attemptBase != nil || state.following)) }
            .sorted { Int($0.key.rawValue.drop { !$0.isNumber }) ?? 0 < Int($1.key.rawValue.drop { !$0.isNumber }) ?? 0 }
        let retrying = shown.filter { $0.value.status == .waitingToRetry }.count
        var lines = shown.prefix(8).map { render($0.value, now: now, width: width, podcasts: state.podcasts.count > 1) }
        if shown.count > 8 { lines.append("  … and \(shown.count - 8) more") }
        let speed = state.rate.perSecond(at: now)
        let left = Self.bytesLeft(state.rows.values)
        let queued = state.rows.values.filter { !$0.removed && $0.status == .queued }.count
        let failed = state.rows.values.filter { !$0.removed && $0.status == .failed }.count
        // The run's line, in parts a narrow terminal does without first (the counts of active and
        // queued, the speed, the bytes left), so the ETA and what it leaves out stay in sight.
        var parts: [(text: String, drop: Int)] = [("\(state.completed + state.alreadyThere)/\(state.expected + state.notURLs) done", 0)]
        if failed > 0 { parts.append(("\(failed) failed", 0)) }
        parts.append(("\(shown.count - retrying) active", 4))
        if retrying > 0 { parts.append(("\(retrying) retrying", 4)) }
        parts.append(("\(queued) queued", 3))
        if left.bytes > 0 { parts.append(("\(ByteCount.format(left.bytes)) left", 1)) }
        parts.append(("\(ByteCount.format(Int(speed)))/s", 2))
        if let eta = Self.eta(left.bytes, speed: speed) { parts.append(("ETA \(eta)", 0)) }
        if left.unknown > 0 { parts.append(("\(left.unknown) size\(left.unknown == 1 ? "" : "s") unknown", 0)) }
        var summary = parts.map(\.text).joined(separator: " · ")
        for level in [4, 3, 2, 1] where TerminalText.displayWidth(summary) > width {
            parts.removeAll { $0.drop == level }
            summary = parts.map(\.text).joined(separator: " · ")
        }
        let block = lines.map { TerminalText.clip($0, width: width) } + [TerminalText.clip(summary, width: width)]
        state.block.show(block, above: above, context, at: now) { $0 == block.count - 1 ? paint($1, "1") : $1 }
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

    /// A download's line: its name (the episode's, with its podcast when the run has several),
    /// then its bar, percentage, sizes, speed and time left, or why it waits. A narrow terminal does
    /// without the bar first, then the speed, then the sizes: the name keeps 24 columns (all of a
    /// shorter one), and takes up to 40. Escaped before it is cut: an escape takes columns too.
    func render(_ row: Row, now: Date, width: Int, podcasts: Bool) -> String {
        var tails: [String]
        if row.status == .waitingToRetry {
            let wait = row.retryAt.map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) } ?? 0
            tails = ["  retry in \(wait) s: \(TerminalText.escape(row.error?.message ?? "", keepingLayout: false))"]
        } else if row.bytes == 0 && row.total == nil {
            tails = ["  connecting…"]
        } else {
            let size = "  " + (row.total.map { "\(ByteCount.format(row.bytes)) / \(ByteCount.format($0))" } ?? ByteCount.format(row.bytes))
            var bar = "??????????"
            var percent = "  ?"
            if let total = row.total, total > 0 {
                let fraction = min(1, Double(row.bytes) / Double(total))
                bar = String(repeating: "#", count: Int(fraction * 10)) + String(repeating: "-", count: 10 - Int(fraction * 10))
                percent = String(Int(fraction * 100))
                percent = String(repeating: " ", count: max(0, 3 - percent.count)) + percent
            }
            let speed = row.rate.perSecond(at: now)
            let eta = row.total.flatMap { Self.eta($0 - row.bytes, speed: speed) }.map { "  ETA \($0)" } ?? ""
            let rate = "  \(ByteCount.format(Int(speed)))/s"
            tails = [" [\(bar)] \(percent)%\(size)\(rate)\(eta)", " \(percent)%\(size)\(rate)\(eta)", " \(percent)%\(size)\(eta)", " \(percent)%\(eta)"]
        }
        let full = row.episode?.fitted(width: 40, withPodcast: podcasts) ?? TerminalText.escape(row.name, keepingLayout: false)
        let wanted = min(24, TerminalText.displayWidth(full))
        let tail = tails.first { width - 2 - TerminalText.displayWidth($0) >= wanted } ?? tails[tails.count - 1]
        let room = max(10, min(40, width - 2 - TerminalText.displayWidth(tail)))
        let name = row.episode?.fitted(width: room, withPodcast: podcasts) ?? TerminalText.middleCut(TerminalText.escape(row.name, keepingLayout: false), width: room)
        return "  " + TerminalText.pad(name, width: room) + tail
    }

    /// The name a row shows: the episode's title (an episode download carries it), else the
    /// file's name once it has one, else the last part of its URL.
    static func name(of download: Download) -> String {
        if let episode = EpisodeLabel(download.request) { return episode.title }
        if let path = download.filePath { return path.fileName }
        if case .file(let path) = download.request.destination { return path.fileName }
        return name(of: download.request.url)
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
