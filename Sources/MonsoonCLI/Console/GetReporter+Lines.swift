import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// The reporter's lines: one per event, in the run's style (JSON, event lines, or files and
/// messages), and `--verbose`'s one per request.
extension GetReporter {
    enum Announcement {
        /// The URL as requested, redacted where it is shown (most runs show no `started` line).
        case started(url: URL)
        case finished(path: String, name: String, bytes: Int, checksum: String?)
        case retrying(url: String, seconds: Int, reason: String)
        case failed(url: String, reason: String)
        case paused
        case removed
        case waitingForSpace(url: String, reason: String)
    }

    /// Says what happened to download `id`, in the run's style.
    func announce(_ state: inout State, _ what: Announcement, id: String) {
        let episode = state.rows[DownloadID(id)]?.episode
        let monsoon = speaker(state, DownloadID(id))
        switch style {
        case .json:
            var fields: [(String, String)] = [("id", JSONText.string(id))] + (episode?.jsonFields ?? [])
            let name: String
            switch what {
            case .started(let url): name = "started"; fields.append(("url", JSONText.string(Redaction.redact(url))))
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
            case .started(let url): context.output.line("started \(id) \(Redaction.redact(url))")
            case .finished(let path, _, let bytes, let checksum): context.output.line("finished \(id) \(path) \(bytes)" + (checksum.map { " " + $0 } ?? ""))
            case .retrying(_, let seconds, let reason): context.output.line("retrying \(id) in \(seconds) s: \(reason)")
            // Where `get` says it, with --quiet or without: standard output keeps the run's work.
            case .failed(let url, let reason): context.errors.line(monsoon + "\(id) failed: \(url): \(reason)")
            case .paused: context.output.line("paused \(id) from another command")
            case .removed: context.output.line("removed \(id)")
            case .waitingForSpace(_, let reason): context.output.line("waiting \(id) for disk space: \(reason)")
            }
        case .files, .events:
            switch what {
            case .started(let url):
                if verbose { emitLine(&state, monsoon + "\(id) started: \(Redaction.redact(url))", toErrors: true) }
            case .finished(let path, let name, let bytes, let checksum):
                guard !quiet else { break }
                if live {
                    // Never wider than the terminal: a wrapped line would move the block below it.
                    let size = ByteCount.format(bytes)
                    let room = max(8, context.terminalWidth - 5 - size.count)
                    let shown = episode?.fitted(width: room, withPodcast: state.podcasts.count > 1)
                        ?? TerminalText.middleCut(TerminalText.escape(name, keepingLayout: false), width: room)
                    emitLine(&state, "✓ \(shown)  \(size)", toErrors: false, color: "32")
                } else {
                    emitLine(&state, "\(path)\t\(bytes)" + (checksum.map { "\t" + $0 } ?? ""), toErrors: false)
                }
            case .retrying(_, let seconds, let reason):
                if !quiet { emitLine(&state, monsoon + "\(id) retrying in \(seconds) s: \(reason)", toErrors: true) }
            case .failed(let url, let reason): emitLine(&state, monsoon + "\(id) failed: \(url): \(reason)", toErrors: true)
            case .paused: emitLine(&state, monsoon + "\(id) paused from another command", toErrors: true)
            case .removed: emitLine(&state, monsoon + "\(id) removed", toErrors: true)
            case .waitingForSpace(_, let reason): emitLine(&state, monsoon + "\(id) waiting for disk space: \(reason)", toErrors: true)
            }
        }
    }

    /// `--verbose`: each request as it ends (status, bytes, where it resumed, timings, connection).
    func describe(_ state: inout State, _ attempt: AttemptReport) {
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
        var line = speaker(state, attempt.id) + "\(attempt.id.rawValue) \(attempt.host): \(attempt.status == 0 ? "no response" : "HTTP \(attempt.status)")"
        if attempt.resumedFrom > 0 { line += " from byte \(attempt.resumedFrom)" }
        line += ", \(ByteCount.format(attempt.bytes)) in \(String(cFormat: "%.2f", attempt.duration)) s"
        if let ttfb { line += " (first byte after \(String(cFormat: "%.3f", ttfb)) s)" }
        line += attempt.newConnections > 0 ? ", new connection" : ", reused connection"
        if let error = attempt.error { line += ": \(error.message)" }
        emitLine(&state, line, toErrors: true)
    }

    /// "monsoon: ", then the episode's podcast when the run has several (as a refresh names it,
    /// `monsoon: NAME: REASON`): how a download's line on standard error starts.
    func speaker(_ state: State, _ id: DownloadID) -> String {
        guard state.podcasts.count > 1, let podcast = state.rows[id]?.episode?.podcast else { return "monsoon: " }
        return "monsoon: \(podcast): "
    }

    /// One JSON object on a line: `event` and `time` first, then `fields` (already JSON).
    static func jsonLine(_ event: String, _ fields: [(String, String)]) -> String {
        var text = "{\"event\": \(JSONText.string(event)), \"time\": \(LibraryJSON.timestamp(Date()))"
        for (key, value) in fields { text += ", \(JSONText.string(key)): \(value)" }
        return text + "}"
    }
}
