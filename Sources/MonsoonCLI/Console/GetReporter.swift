import Foundation
import Synchronization
import MonsoonPodcasts
import MonsoonEngine

/// Shows what a downloading command is doing: live progress on a terminal, one plain
/// line per finished download otherwise, everything else on standard error; and, at the
/// end, the summary and the exit status.
///
/// A `get` answers for its own downloads only (`answerFor(_:)`): events of other
/// downloads the same engine runs (those another `get` handed over) are ignored.
final class GetReporter: Sendable {
    private struct Row {
        var name: String
        var url: URL
        var status: DownloadStatus = .queued
        var removed = false
        var bytes = 0
        var total: Int?
        var error: DownloadError?
        var retryAt: Date?
        /// The reason a hold for room was last said with: said once per hold, however often the
        /// row is read again (a hand-off follower reads it at every change of the database).
        var announcedHold: String?
        /// For the speed: bytes at the previous sample, and when.
        var sampleBytes = 0
        var sampleTime = Date()
        var speed: Double = 0
    }

    private struct State {
        var rows: [DownloadID: Row] = [:]
        /// The downloads this run answers for; nil: every download it hears of.
        var own: Set<DownloadID>?
        /// What the summary counts: the URLs given, or the downloads queued at the start.
        var expected: Int
        var alreadyThere = 0
        var notURLs = 0
        var completed = 0
        var drawnLines = 0
        var lastDraw = Date.distantPast
        var started = Date()
        var finishedBytes = 0
    }

    /// What a run came to, for the summary line and the exit status.
    struct Tally: Equatable {
        var expected = 0
        /// Bytes of the downloads completed in this run.
        var bytes = 0
        var completed = 0
        var alreadyThere = 0
        var failed = 0
        var paused = 0
        var removed = 0
        var interrupted = 0
        var notStarted = 0
        var notURLs = 0
        /// Left queued, waiting for room on the disk (their parts kept).
        var waitingForSpace = 0
        var diskFull = false
    }

    /// How events are written when they are not drawn live.
    enum Style: Sendable {
        /// `get` and `download`: a finished file as `PATH<TAB>BYTES` on standard output,
        /// everything else on standard error.
        case files
        /// `archive` and `sync`: one line per event on standard output (started, finished,
        /// retrying, failed, paused, removed).
        case events
        /// `--json`: one JSON object per event on standard output, never a live view.
        case json
    }

    private let context: CommandContext
    private let quiet: Bool
    private let verbose: Bool
    private let style: Style
    /// Whether `finish` prints the `N of M downloaded` line (`archive` prints its own).
    private let summarizes: Bool
    private let state: Mutex<State>
    private let live: Bool
    /// ANSI colours on the live view, unless `NO_COLOR` is set (no-color.org).
    private let colors: Bool

    /// - Parameter expected: how many downloads the summary counts (`N of expected`); a
    ///   run that answers for every download adds those handed to it as they come.
    init(context: CommandContext, quiet: Bool, verbose: Bool, expected: Int, style: Style = .files, summarizes: Bool = true) {
        self.context = context
        self.quiet = quiet
        self.verbose = verbose
        self.style = style
        self.summarizes = summarizes
        state = Mutex(State(expected: expected))
        live = context.isTerminal && !quiet && style != .json
        colors = live && (context.environment["NO_COLOR"] ?? "").isEmpty
    }

    /// From now on, only these downloads count and are shown (a `get`'s own). Call it
    /// before the first event is handled.
    func answerFor(_ downloads: [(id: DownloadID, url: URL)]) {
        state.withLock { state in
            state.own = Set(downloads.map(\.id))
            state.rows.reserveCapacity(state.rows.count + downloads.count)   // one table, not a doubling series
            for (id, url) in downloads where state.rows[id] == nil {
                state.rows[id] = Row(name: Self.name(of: url), url: url)
            }
        }
    }

    /// URLs that were done before the run (their file is there): counted as downloaded.
    func countAlreadyThere(_ count: Int) {
        state.withLock { $0.alreadyThere += count }
    }

    /// Lines of the input that were not http or https URLs: named already, counted here.
    func countNotURLs(_ count: Int) {
        state.withLock { $0.notURLs += count }
    }

    /// The downloads this run answers for that may still change (for a `get` that follows
    /// downloads another process runs).
    var unsettled: [DownloadID] {
        state.withLock { state in
            // One waiting for room is settled for this run: it is left queued, and said so.
            state.rows.filter { !$0.value.removed && $0.value.status.isActive && $0.value.error?.code != .notEnoughDiskSpace }
                .map(\.key).sorted { $0.rawValue < $1.rawValue }
        }
    }

    func handle(_ event: DownloadEvent) {
        state.withLock { state in
            switch event {
            case .added(let download):
                guard state.own == nil else { return }
                if state.rows[download.id] == nil { state.expected += 1 }
                state.rows[download.id] = Row(name: Self.name(of: download), url: download.request.url)
            case .progress(let id, let bytes, let total):
                guard state.own?.contains(id) ?? true else { return }
                state.rows[id]?.bytes = bytes
                state.rows[id]?.total = total
            case .statusChanged(let download):
                guard state.own?.contains(download.id) ?? true else { return }
                update(&state, with: download)
            case .removed(let id):
                guard state.own?.contains(id) ?? true, state.rows[id]?.removed == false else { return }
                state.rows[id]?.removed = true
                announce(&state, .removed, id: id.rawValue)
                if live { draw(&state) }
            case .attempt(let attempt):
                guard verbose, state.own?.contains(attempt.id) ?? true else { return }
                describe(&state, attempt)
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
        defer { if live && Date().timeIntervalSince(state.lastDraw) >= 0.1 { draw(&state) } }   // at most ten redraws a second
        let id = download.id.rawValue
        let url = Redaction.redact(download.request.url)
        // Held for room on the disk: queued again (or still), its part kept; said once per hold.
        if download.status == .queued, let error = download.lastError, error.code == .notEnoughDiskSpace {
            if state.rows[download.id]?.announcedHold != error.message {
                state.rows[download.id]?.announcedHold = error.message
                announce(&state, .waitingForSpace(url: url, reason: error.message), id: id)
            }
            return
        }
        state.rows[download.id]?.announcedHold = nil
        guard previous != download.status else { return }
        switch download.status {
        case .completed:
            state.completed += 1
            state.finishedBytes += download.bytes
            // A counted body (`get --discard`) has no file: its URL stands for it, with its hash.
            announce(&state, .finished(path: download.filePath ?? url, name: row.name, bytes: download.bytes, checksum: download.checksum), id: id)
        case .failed:
            var reason = download.lastError?.message ?? "unknown error"
            // `get` and `download` take --cacert: say so where trusting an authority would help.
            if download.lastError?.code == .untrustedCertificate { reason += "; if you trust the server, give its certificate authority with --cacert FILE" }
            announce(&state, .failed(url: url, reason: reason), id: id)
        case .paused:
            announce(&state, .paused, id: id)
        case .waitingToRetry:
            let wait = download.retryAt.map { max(0, Int($0.timeIntervalSinceNow.rounded(.up))) } ?? 0
            announce(&state, .retrying(url: url, seconds: wait, reason: download.lastError?.message ?? "the attempt failed"), id: id)
        case .downloading:
            announce(&state, .started(url: url), id: id)
        case .queued:
            break
        }
    }

    /// Redraws the live block (terminal only); called a few times a second.
    func redraw() {
        guard live else { return }
        state.withLock { draw(&$0) }
    }

    /// What the run came to so far.
    var tally: Tally {
        state.withLock { state in
            var tally = Tally(expected: state.expected, bytes: state.finishedBytes, alreadyThere: state.alreadyThere, notURLs: state.notURLs)
            for row in state.rows.values {
                if row.removed { tally.removed += 1; continue }
                switch row.status {
                case .completed: tally.completed += 1
                case .failed:
                    tally.failed += 1
                    if row.error?.code == .notEnoughDiskSpace { tally.diskFull = true }
                case .paused: tally.paused += 1
                case .downloading, .waitingToRetry: tally.interrupted += 1
                case .queued:
                    if row.error?.code == .notEnoughDiskSpace {
                        tally.waitingForSpace += 1
                        tally.diskFull = true
                    } else if row.bytes > 0 {
                        tally.interrupted += 1
                    } else {
                        tally.notStarted += 1
                    }
                }
            }
            if state.own == nil {
                // Downloads that never changed status sent no event: queued, not started.
                let seen = tally.completed + tally.failed + tally.paused + tally.removed + tally.interrupted + tally.notStarted + tally.waitingForSpace
                tally.notStarted += max(0, state.expected - seen)
            }
            return tally
        }
    }

    /// The last word: on a terminal, clears the block; prints the summary when there is
    /// something to say (always on a terminal).
    func finish(interrupted: Bool) {
        let tally = self.tally
        state.withLock { state in
            if live { clearBlock(&state) }
            guard summarizes, !quiet || interrupted else { return }
            let elapsed = max(0.001, Date().timeIntervalSince(state.started))
            var summary = Self.summary(tally) + " (\(ByteCount.format(state.finishedBytes)) in \(Self.duration(elapsed)))"
            if interrupted { summary = "interrupted: part files kept; run the same command again to resume. " + summary }
            let allDone = tally.completed + tally.alreadyThere == tally.expected && tally.notURLs == 0
            if live || interrupted || !allDone || verbose {
                context.errors.line(live && !interrupted ? summary : "monsoon: \(summary)")
            }
        }
    }

    /// `N of M downloaded`, then what else happened, in a fixed order.
    static func summary(_ tally: Tally) -> String {
        var parts = ["\(tally.completed + tally.alreadyThere) of \(tally.expected + tally.notURLs) downloaded"]
        func add(_ count: Int, _ text: String) { if count > 0 { parts.append("\(count) \(text)") } }
        add(tally.alreadyThere, "already there")
        add(tally.failed, "failed")
        add(tally.paused, "paused")
        add(tally.removed, "removed")
        add(tally.interrupted, "interrupted")
        add(tally.notStarted, "not started")
        add(tally.waitingForSpace, "left queued for lack of disk space")
        add(tally.notURLs, tally.notURLs == 1 ? "not a URL" : "not URLs")
        return parts.joined(separator: ", ")
    }

    /// 3 when a download failed or was left queued for lack of disk space, else 2 when input lines were not
    /// URLs, else 1 when a download did not complete (failed, paused, removed), else 0.
    /// `paused` and `removed` count only for a run that answers for its own downloads:
    /// `monsoon download` is steered by the user on purpose.
    func exitStatus() -> Int32 {
        let tally = self.tally
        let ownsDownloads = state.withLock { $0.own != nil }
        if tally.diskFull { return ExitStatus.diskFull }
        if tally.notURLs > 0 { return ExitStatus.usage }
        if tally.failed > 0 || tally.interrupted + tally.notStarted > 0 { return ExitStatus.failure }
        if ownsDownloads && tally.paused + tally.removed > 0 { return ExitStatus.failure }
        return ExitStatus.success
    }

    // MARK: - Lines

    private enum Announcement {
        case started(url: String)
        case finished(path: String, name: String, bytes: Int, checksum: String?)
        case retrying(url: String, seconds: Int, reason: String)
        case failed(url: String, reason: String)
        case paused
        case removed
        case waitingForSpace(url: String, reason: String)
    }

    /// Says what happened to download `id`, in the run's style.
    private func announce(_ state: inout State, _ what: Announcement, id: String) {
        switch style {
        case .json:
            var fields: [(String, String)] = [("id", JSONText.string(id))]
            let name: String
            switch what {
            case .started(let url): name = "started"; fields.append(("url", JSONText.string(url)))
            case .finished(let path, _, let bytes, let checksum):
                name = "finished"
                fields += [("path", JSONText.string(path)), ("bytes", String(bytes))]
                if let checksum { fields.append(("sha256", JSONText.string(checksum))) }
            case .retrying(let url, let seconds, let reason):
                name = "retrying"; fields += [("url", JSONText.string(url)), ("seconds", String(seconds)), ("reason", JSONText.string(reason))]
            case .failed(let url, let reason): name = "failed"; fields += [("url", JSONText.string(url)), ("reason", JSONText.string(reason))]
            case .paused: name = "paused"
            case .removed: name = "removed"
            case .waitingForSpace(let url, let reason):
                name = "waitingForSpace"; fields += [("url", JSONText.string(url)), ("reason", JSONText.string(reason))]
            }
            context.output.line(Self.jsonLine(name, fields))
        case .events where !live:
            guard !quiet || {
                switch what {
                case .failed, .waitingForSpace: return true
                default: return false
                }
            }() else { return }
            switch what {
            case .started(let url): context.output.line("started \(id) \(url)")
            case .finished(let path, _, let bytes, let checksum): context.output.line("finished \(id) \(path) \(bytes)" + (checksum.map { " " + $0 } ?? ""))
            case .retrying(_, let seconds, let reason): context.output.line("retrying \(id) in \(seconds) s: \(reason)")
            case .failed(let url, let reason): context.output.line("failed \(id) \(url): \(reason)")
            case .paused: context.output.line("paused \(id) from another command")
            case .removed: context.output.line("removed \(id)")
            case .waitingForSpace(_, let reason): context.output.line("waiting \(id) for disk space: \(reason)")
            }
        case .files, .events:
            switch what {
            case .started(let url):
                if verbose { emitLine(&state, "monsoon: \(id) started: \(url)", toErrors: true) }
            case .finished(let path, let name, let bytes, let checksum):
                guard !quiet else { break }
                if live {
                    emitLine(&state, "✓ \(name)  \(ByteCount.format(bytes))", toErrors: false, color: "32")
                } else {
                    emitLine(&state, "\(path)\t\(bytes)" + (checksum.map { "\t" + $0 } ?? ""), toErrors: false)
                }
            case .retrying(_, let seconds, let reason):
                if !quiet { emitLine(&state, "monsoon: \(id) retrying in \(seconds) s: \(reason)", toErrors: true) }
            case .failed(let url, let reason): emitLine(&state, "monsoon: \(id) failed: \(url): \(reason)", toErrors: true)
            case .paused: emitLine(&state, "monsoon: \(id) paused from another command", toErrors: true)
            case .removed: emitLine(&state, "monsoon: \(id) removed", toErrors: true)
            case .waitingForSpace(_, let reason): emitLine(&state, "monsoon: \(id) waiting for disk space: \(reason)", toErrors: true)
            }
        }
    }

    /// `--verbose`: each request as it ends (status, bytes, where it resumed, timings, connection).
    private func describe(_ state: inout State, _ attempt: AttemptReport) {
        let ttfb = attempt.timeToFirstByte
        if style == .json {
            var fields: [(String, String)] = [("id", JSONText.string(attempt.id.rawValue)), ("host", JSONText.string(attempt.host)),
                                              ("status", String(attempt.status)), ("bytes", String(attempt.bytes)), ("resumedFrom", String(attempt.resumedFrom)),
                                              ("seconds", JSONText.number(attempt.duration)), ("newConnections", String(attempt.newConnections))]
            fields.append(("timeToFirstByte", ttfb.map(JSONText.number) ?? "null"))
            if let error = attempt.error { fields.append(("error", JSONText.string(error.message))) }
            context.output.line(Self.jsonLine("attempt", fields))
            return
        }
        var line = "monsoon: \(attempt.id.rawValue) \(attempt.host): \(attempt.status == 0 ? "no response" : "HTTP \(attempt.status)")"
        if attempt.resumedFrom > 0 { line += " from byte \(attempt.resumedFrom)" }
        line += ", \(ByteCount.format(attempt.bytes)) in \(String(format: "%.2f", attempt.duration)) s"
        if let ttfb { line += " (first byte after \(String(format: "%.3f", ttfb)) s)" }
        line += attempt.newConnections > 0 ? ", new connection" : ", reused connection"
        if let error = attempt.error { line += ": \(error.message)" }
        emitLine(&state, line, toErrors: true)
    }

    /// One JSON object on a line: `event` and `time` first, then `fields` (already JSON).
    static func jsonLine(_ event: String, _ fields: [(String, String)]) -> String {
        var text = "{\"event\": \(JSONText.string(event)), \"time\": \(LibraryJSON.timestamp(Date()))"
        for (key, value) in fields { text += ", \(JSONText.string(key)): \(value)" }
        return text + "}"
    }

    // MARK: - Drawing

    /// A line above the live block (which is cleared first), in an ANSI colour when given.
    private func emitLine(_ state: inout State, _ line: String, toErrors: Bool, color: String? = nil) {
        if live { clearBlock(&state) }
        let target = toErrors ? context.errors : context.output
        guard let color else { return target.line(line) }
        target.writeVerbatim(paint(TerminalText.escape(line, keepingLayout: false), color) + "\n")
    }

    private func clearBlock(_ state: inout State) {
        guard state.drawnLines > 0 else { return }
        context.output.writeVerbatim("\u{1B}[\(state.drawnLines)A\u{1B}[J")
        state.drawnLines = 0
    }

    private func draw(_ state: inout State) {
        let now = Date()
        var lines: [String] = []
        let active = state.rows.filter { !$0.value.removed && ($0.value.status == .downloading || $0.value.status == .waitingToRetry) }
            .sorted { Int($0.key.rawValue.drop { !$0.isNumber }) ?? 0 < Int($1.key.rawValue.drop { !$0.isNumber }) ?? 0 }
        var totalSpeed = 0.0
        var remaining = 0
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
            if let total = row.total { remaining += max(0, total - row.bytes) }
            if lines.count < 8 { lines.append(render(row, now: now, nameWidth: max(10, min(40, context.terminalWidth - 62)))) }
        }
        if active.count > 8 { lines.append("  … and \(active.count - 8) more") }
        let queued = state.rows.values.filter { !$0.removed && $0.status == .queued }.count
        let failed = state.rows.values.filter { !$0.removed && $0.status == .failed }.count
        var summary = "\(state.completed + state.alreadyThere)/\(state.expected + state.notURLs) done"
        if failed > 0 { summary += " · \(failed) failed" }
        summary += " · \(active.count) active · \(queued) queued · \(ByteCount.format(Int(totalSpeed)))/s"
        if let eta = Self.eta(remaining, speed: totalSpeed) { summary += " · ETA \(eta)" }
        clearBlock(&state)
        let width = max(20, context.terminalWidth - 1)
        // Names and reasons come from servers and feeds: escaped before the block's own colours.
        var text = lines.map { Self.clip(TerminalText.escape($0, keepingLayout: false), width) + "\n" }.joined()
        text += paint(Self.clip(summary, width), "1") + "\n"
        context.output.writeVerbatim(text)
        state.drawnLines = lines.count + 1
        state.lastDraw = now
    }

    /// `text` in an ANSI colour (SGR `code`) when colours are on.
    private func paint(_ text: String, _ code: String) -> String {
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

    private func render(_ row: Row, now: Date, nameWidth: Int) -> String {
        if row.status == .waitingToRetry {
            let wait = row.retryAt.map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) } ?? 0
            return "  \(Self.pad(row.name, nameWidth))  retry in \(wait) s: \(row.error?.message ?? "")"
        }
        if row.bytes == 0 && row.total == nil {
            return "  \(Self.pad(row.name, nameWidth))  connecting…"
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
        return "  \(Self.pad(row.name, nameWidth)) [\(bar)] \(percent)%  \(size)  \(ByteCount.format(Int(row.speed)))/s\(eta)"
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
        return name(of: download.request.url)
    }

    private static func name(of url: URL) -> String {
        let last = url.lastPathComponent
        return last.isEmpty || last == "/" ? url.host ?? "download" : last
    }

    private static func duration(_ seconds: Double) -> String {
        if seconds < 60 { return String(format: "%.1f s", seconds) }
        return "\(Int(seconds) / 60) min \(Int(seconds) % 60) s"
    }
}
