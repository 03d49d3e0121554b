import FoundationEssentials
import MonsoonPodcasts

struct Play: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play an episode with mpv, from its saved position (the download, else streamed).",
        discussion: """
            Keys (on a terminal): left arrow back 15 s, right arrow forward 30 s, space pause, q quit. \
            The position is saved every 5 seconds, on pause and when playback ends; an episode that \
            ends within played-threshold seconds (30) of its end is marked played. Options after -- \
            go to mpv.

            Examples:

              monsoon play 42
              monsoon play 42 -- --speed=1.5
            """)

    static let handlesInterruption = true

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The episode's id.", valueName: "episode") var episode: Int
    @Argument(help: "Options for mpv, after --.", valueName: "mpv-option") var mpvOptions: [String] = []
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        guard let mpv = MpvPlayer.locate(path: context.environment["PATH"]) else {
            throw CLIError(message: "mpv is not installed; install it with: sudo apt-get install --no-install-recommends mpv")
        }
        let session = try EpisodeFileSession.open(global, context: context)
        let item = try session.run { try $0.playbackItem(episode) }
        let threshold = try CLIError.prefixing("cannot read the settings") { try session.settings.playedThreshold() }
        let target: String
        switch item.source {
        case .file(let path):
            target = path
        case .stream(let url):
            if let refusal = PlaybackRules.streamRefusal(url) { throw CLIError(message: "cannot play episode \(episode): \(refusal)") }
            target = url.absoluteString
        }
        let environment = ProcessInfo.processInfo.environment.merging(context.environment) { $1 }
        let interruption = context.interruption
        let player: MpvPlayer
        do {
            player = try await MpvPlayer.start(executable: mpv, target: target, start: item.position, options: mpvOptions,
                                               environment: environment, cancelled: { interruption.isTriggered })
        } catch let error as CLIError where interruption.isTriggered {
            throw CLIError(message: error.message, status: ExitStatus.interrupted)
        }
        defer { player.stop() }
        let keys = KeyReader(descriptor: context.keyInput)
        defer { keys?.stop() }
        if !context.isTerminal && !global.quiet {
            context.output.line("playing episode \(episode) (\(item.title)) from \(PlaybackRules.clock(item.position))\(keys == nil ? "" : "; keys: ← −15 s, → +30 s, space pause, q quit")")
        }

        let playback = PlaybackLoop(player: player, keys: keys, item: item, files: session.files, context: context, quiet: global.quiet)
        let end = await playback.run()
        // Played only by what mpv itself reported: a feed's duration may be wrong (minutes for
        // seconds), and playback that failed or never started played nothing.
        let duration = end.failure == nil && end.reported ? end.duration : nil
        let played = try CLIError.prefixing("cannot save the position of episode \(episode)") {
            try session.files.finishPlayback(episode, at: end.position, duration: duration, threshold: threshold)
        }

        var line = played ? "episode \(episode) played to the end: marked played"
            : "stopped at \(PlaybackRules.clock(end.position))\((end.duration ?? item.duration).map { " of " + PlaybackRules.clock($0) } ?? ""); position saved (\(String(cFormat: "%.1f", end.position)) s)"
        if played {
            let freed = try session.run { try $0.applyRetention(session.settings, keepLatest: false) }
            if freed.episodes.contains(episode) { line += "; its download was deleted, as auto-delete-played asks" }
        }
        if !global.quiet { context.output.line(line) }
        if let failure = end.failure {
            context.error(failure)
            return ExitStatus.failure
        }
        return end.interrupted ? ExitStatus.interrupted : ExitStatus.success
    }
}

struct Position: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "position",
        abstract: "Show or set an episode's saved playback position, in seconds.",
        discussion: "Examples:\n\n  monsoon position 42\n  monsoon position 42 184.5")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The episode's id.", valueName: "episode") var episode: Int
    @Argument(help: "The new position, in seconds.", valueName: "seconds") var seconds: Double?
    init() {}

    func validate() throws {
        if let seconds, !(seconds >= 0 && seconds.isFinite) { throw ValidationError("the position must be a number of seconds, 0 or more") }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try EpisodeFileSession.open(global, context: context)
        if let seconds {
            try session.run { try $0.setPosition(seconds, of: episode) }
            if !global.quiet { context.output.line("episode \(episode): position set to \(String(cFormat: "%.1f", seconds)) (\(PlaybackRules.clock(seconds)))") }
        } else {
            let position = try session.run { try $0.position(of: episode) }
            context.output.line("\(String(cFormat: "%.1f", position))\t\(PlaybackRules.clock(position))")
        }
        return ExitStatus.success
    }
}
