import Foundation
import MonsoonPodcasts

/// What `play` does while mpv plays: keys to mpv, the position saved every 5 seconds and on
/// pause, a status line on a terminal, Ctrl-C as a quit. Returns once mpv is gone.
struct PlaybackLoop {
    /// How playback ended.
    struct End {
        /// The last position mpv reported (where it started, if it reported none).
        var position: Double
        var duration: Double?
        var interrupted: Bool
        /// What went wrong with mpv, if it did not end normally.
        var failure: String?
    }

    let player: MpvPlayer
    let keys: KeyReader?
    let item: PlaybackItem
    let files: EpisodeFiles
    let context: CommandContext
    let quiet: Bool

    static let saveInterval: TimeInterval = 5

    func run() async throws -> End {
        var position = item.position
        var lastSave = Date()
        var wasPaused = false
        var quitAsked: Date?
        var shown = ""
        while player.isRunning {
            if context.interruption.isTriggered && quitAsked == nil {
                player.quit()
                quitAsked = Date()
            }
            let state = player.current
            if let reported = state.position { position = reported }
            // Keys wait until the file is loaded: a seek before that is lost.
            if state.loaded {
                for key in keys?.take() ?? [] {
                    switch key {
                    case .back: player.seek(by: -15)
                    case .forward: player.seek(by: 30)
                    case .pause: player.togglePause()
                    case .quit:
                        player.quit()
                        quitAsked = quitAsked ?? Date()
                    }
                }
            }
            if (state.paused && !wasPaused) || Date().timeIntervalSince(lastSave) >= Self.saveInterval {
                try save(position)
                lastSave = Date()
            }
            wasPaused = state.paused
            if context.isTerminal && !quiet {
                let line = statusLine(position: position, state: state)
                if line != shown { context.output.write("\r\u{1B}[2K" + line) }
                shown = line
            }
            // mpv that does not quit within 5 s of being asked is stopped: the position is known.
            if let asked = quitAsked, Date().timeIntervalSince(asked) > 5 { kill(player.pid, SIGKILL) }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        // The reader thread may still be taking mpv's last lines: give it a moment.
        try await Task.sleep(nanoseconds: 50_000_000)
        let state = player.current
        if let reported = state.position { position = reported }
        if context.isTerminal && !quiet { context.output.write("\r\u{1B}[2K") }
        return End(position: position, duration: state.duration, interrupted: quitAsked != nil && context.interruption.isTriggered,
                   failure: failure(state))
    }

    private func save(_ position: Double) throws {
        do {
            try files.setPosition(position, of: item.episodeID)
        } catch {
            throw CLIError(message: "cannot save the position of episode \(item.episodeID): \(error)")
        }
    }

    /// mpv killed by a signal, or unable to play the file: its last error line says why.
    private func failure(_ state: MpvPlayer.State) -> String? {
        let code = player.exitCode ?? 0
        if code > 128 && !context.interruption.isTriggered { return "mpv stopped unexpectedly (signal \(code - 128)); the position was saved" }
        guard code != 0 || state.endReason == "error" else { return nil }
        let reason = MpvPlayer.reason(logAt: player.logPath).map { ": " + $0 } ?? ""
        return "mpv could not play \(item.title) (exit status \(code))\(reason)"
    }

    /// The status line: the episode, the position, the duration and the keys (cut to the width).
    private func statusLine(position: Double, state: MpvPlayer.State) -> String {
        let duration = (state.duration ?? item.duration).map { " / " + PlaybackRules.clock($0) } ?? ""
        let mark = state.paused ? "‖" : "▶"
        var line = "\(mark) \(item.title)  \(PlaybackRules.clock(position))\(duration)"
        if keys != nil { line += "   ← −15s  → +30s  space pause  q quit" }
        return String(line.prefix(context.terminalWidth - 1))
    }
}
