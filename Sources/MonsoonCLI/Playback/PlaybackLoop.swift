import FoundationEssentials
import MonsoonPodcasts

/// What `play` does while mpv plays: keys to mpv, the position saved every 5 seconds
/// (`Timings.playbackSave`) and on pause, a status line on a terminal, Ctrl-C as a quit.
///
/// Whenever playback stops (q, Ctrl-C, the end of the file or of `--length`, a pause), the
/// position saved is the one mpv answers when asked: those it reports as it plays lag behind
/// (half a second at the end of a `--length`). Only when it cannot answer does the last stand.

struct PlaybackLoop {
    struct End {
        /// Where mpv said playback stopped, else the last position it reported, else where
        /// playback was to start.
        var position: Double
        /// Whether mpv reported any position (it loaded the file and played).
        var reported: Bool
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

    /// How long mpv has to say where it is (it answers within milliseconds unless it hangs).
    static let answerTimeout: TimeInterval = 2

    func run() async -> End {
        var position = item.position
        // Where mpv said it stopped: final, whatever it reports after.
        var stoppedAt: Double?
        var lastSave = Date()
        var saveFailed = false
        var wasPaused = false
        var quitAsked: Date?
        var shown = ""
        var waiting: [KeyReader.Key] = []
        func stop() async {
            guard quitAsked == nil else { return }
            stoppedAt = await player.position(within: Self.answerTimeout)
            if let stoppedAt { position = stoppedAt }
            player.quit()
            quitAsked = Date()
        }
        while player.ended == nil {
            if context.interruption.isTriggered { await stop() }
            var state = player.current
            if stoppedAt == nil, let reported = state.position { position = reported }
            // q works at once; the other keys wait until mpv has loaded the file (a seek before
            // that is lost), then apply in the order pressed.
            waiting += keys?.take() ?? []
            // At the end mpv keeps the file open, paused, so it can still say where it stopped.
            if waiting.contains(.quit) || state.eofReached { await stop() }
            if state.loaded {
                for key in waiting {
                    switch key {
                    case .back: player.seek(by: -15)
                    case .forward: player.seek(by: 30)
                    case .pause: player.togglePause()
                    case .quit: break
                    }
                }
                waiting.removeAll()
            }
            if state.paused && !wasPaused && quitAsked == nil, let paused = await player.position(within: Self.answerTimeout) {
                // Where it paused, not where it last reported before.
                position = paused
                state = player.current
            }
            if (state.paused && !wasPaused) || Date().timeIntervalSince(lastSave) >= context.timings.playbackSave {
                // A failed save (a full disk, say) is said once; playback goes on, and the end tries again.
                if let problem = save(position), !saveFailed {
                    context.error(problem)
                    saveFailed = true
                }
                lastSave = Date()
            }
            wasPaused = state.paused
            if context.isTerminal && !quiet {
                let line = statusLine(position: position, state: state)
                if line != shown { context.output.writeVerbatim("\r\u{1B}[2K" + TerminalText.escape(line, keepingLayout: false)) }
                shown = line
            }
            // mpv that does not quit within 5 s of being asked is stopped: the position is known.
            if let asked = quitAsked, Date().timeIntervalSince(asked) > 5 { player.forceStop() }
            do { try await Task.sleep(nanoseconds: 100_000_000) } catch { player.forceStop() }   // cancelled: stop now
        }
        // The socket closes as mpv exits: the last events are read by then.
        let deadline = Date().addingTimeInterval(2)
        while !player.current.readerDone && Date() < deadline { try? await Task.sleep(nanoseconds: 10_000_000) }   // cancelled: the deadline ends the wait
        let state = player.current
        if stoppedAt == nil, let reported = state.position { position = reported }
        if context.isTerminal && !quiet { context.output.writeVerbatim("\r\u{1B}[2K") }
        return End(position: position, reported: state.loaded, duration: state.duration,
                   interrupted: context.interruption.isTriggered, failure: failure(state))
    }

    /// Saves the position; says what went wrong when it could not.
    func save(_ position: Double) -> String? {
        do {
            try files.setPosition(position, of: item.episodeID)
            return nil
        } catch {
            return "cannot save the position of episode \(item.episodeID): \(error)"
        }
    }

    /// mpv killed by a signal, or unable to play the file: its last error line says why.
    private func failure(_ state: MpvPlayer.State) -> String? {
        guard let exit = player.ended, !exit.killedByMonsoon else { return nil }
        if exit.code > 128 { return "mpv stopped unexpectedly (signal \(exit.code - 128)); the position was saved" }
        guard exit.code != 0 || state.endReason == "error" else { return nil }
        let reason = MpvPlayer.reason(logAt: player.logPath).map { ": " + $0 } ?? ""
        return "mpv could not play \(item.title) (exit status \(exit.code))\(reason)"
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
