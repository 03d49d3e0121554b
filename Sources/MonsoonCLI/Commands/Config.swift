import FoundationEssentials
import MonsoonPodcasts

struct Config: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show or change settings (defaults for the commands; flags override them).",
        discussion: "Keys: " + SettingKey.allCases.map(\.rawValue).joined(separator: ", ") + ". Sizes take units (500MB, 2GiB)."
            + "\n\nExamples:\n\n  monsoon config\n  monsoon config set download-root ~/Podcasts\n  monsoon config get template",
        subcommands: [ConfigList.self, ConfigGet.self, ConfigSet.self, ConfigUnset.self],
        defaultSubcommand: ConfigList.self)
    @OptionGroup var global: GlobalOptions
    init() {}

    /// The home's settings, with a one-line error for a database that cannot be opened.
    static func open(_ global: GlobalOptions, context: CommandContext, use: Home.Use) throws -> Settings {
        try Home(option: global.home, context: context, use: use).openSettings()
    }

    static func shown(_ key: SettingKey, _ value: String) -> String {
        key == .userAgent && value == key.defaultText ? "Monsoon/\(MonsoonCLI.version)" : value
    }
}

struct ConfigList: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List every setting with its value.", discussion: "Examples:\n\n  monsoon config")
    @OptionGroup var global: GlobalOptions
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let settings = try Config.open(global, context: context, use: .reading)
        var text = ""
        try CLIError.prefixing("cannot read the settings") {
            for key in SettingKey.allCases {
                let set = try settings.value(key)
                text += "\(key.rawValue.padded(to: 20)) \(Config.shown(key, set ?? key.defaultText))\(set == nil ? "  (default)" : "")\n"
            }
        }
        context.output.write(text)
        return ExitStatus.success
    }
}

/// A setting's name on the command line: help lists the keys, a typo gets a suggestion, and
/// completion offers them.
extension SettingKey: ExpressibleByArgument {}

/// The setting a `config` command reads or writes, and the podcast it is for.
struct SettingSelection: ParsableArguments {
    @Option("--podcast", help: "The podcast (id or a unique part of its title), for a setting a podcast may have its own value of (keep-latest, auto-download, folder).", valueName: "podcast", completion: .podcasts)
    var podcast: String?
    @Argument(help: "The setting.", valueName: "key") var key: SettingKey
    init() {}

    /// Runs `body` with the home's settings, the key, and the podcast's id when one was named;
    /// a failure of the settings' database is reported as `failure` and its cause.
    func withSetting(_ global: GlobalOptions, context: CommandContext, use: Home.Use, failure: String,
                     _ body: (Settings, SettingKey, Int?) throws -> Void) async throws -> Int32 {
        let settings = try Config.open(global, context: context, use: use)
        let id = try await LibrarySession.podcastID(podcast, global: global, context: context)
        do { try body(settings, key, id) } catch { throw CLIError(message: "\(failure): \(error)") }
        return ExitStatus.success
    }
}

struct ConfigGet: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Print a setting's value in effect.", discussion: "Examples:\n\n  monsoon config get keep-latest --podcast 3")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: SettingSelection
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        try await target.withSetting(global, context: context, use: .reading, failure: "cannot read the settings") { settings, key, id in
            context.output.line(Config.shown(key, try settings.effective(key, podcast: id)))
        }
    }
}

struct ConfigSet: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "set", abstract: "Change a setting.", discussion: "Examples:\n\n  monsoon config set concurrency 4\n  monsoon config set disk-reserve 2GiB\n  monsoon config set keep-latest 5 --podcast \"Morning Show\"")
    @OptionGroup var global: GlobalOptions
    @Option("--podcast", help: "Set it for this podcast only (keep-latest, auto-download, folder).", valueName: "podcast", completion: .podcasts)
    var podcast: String?
    @Argument(help: "The setting.", valueName: "key") var key: SettingKey
    @Argument(help: "The new value.", valueName: "value") var value: String
    init() {}

    mutating func validate() throws {
        do { _ = try key.normalize(value) } catch { throw ValidationError(error.message) }
        if podcast != nil && !key.allowsPodcastOverride { throw ValidationError("\(key.rawValue) has no per-podcast value; set it without --podcast") }
        if podcast == nil && key.isPodcastOnly { throw ValidationError(Settings.podcastOnlyMessage(key)) }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let settings = try Config.open(global, context: context, use: .writing)
        let id = try await LibrarySession.podcastID(podcast, global: global, context: context)
        let earlier = try CLIError.prefixing("cannot read the settings") { try settings.effective(key, podcast: id) }
        let stored: String
        do {
            stored = try settings.set(key, value, podcast: id)
        } catch let error as SettingError {
            throw CLIError.usage(error.message)
        } catch {
            throw CLIError(message: "cannot save the setting: \(error)")
        }
        if !global.quiet { context.output.line("\(key.rawValue) = \(stored)\(id.map { " for podcast \($0)" } ?? "")") }
        if key == .folder && stored != earlier {
            let was = earlier == key.defaultText ? "the download root" : earlier
            context.errors.line("monsoon: its new episodes go to \(stored) from now on; the files downloaded before stay in \(was), "
                                + "and to list those the new folder lacks: monsoon verify \(stored.shellQuoted)")
        }
        if key == .autoDownload && stored == "on" && earlier != "on" { try await sayArrived(podcast: id, settings: settings, context: context) }
        return ExitStatus.success
    }

    /// Auto-download takes what arrives from now on: the episodes that arrived before, never queued, are said, with the
    /// command that queues them.
    private func sayArrived(podcast: Int?, settings: Settings, context: CommandContext) async throws {
        let podcasts = try await LibrarySession.open(global, context: context, use: .reading).run { try $0.podcasts() }
        let episodes = try EpisodeSession.open(global, context: context, use: .reading)
        for found in podcasts where podcast == nil || found.id == podcast {
            guard try CLIError.prefixing("cannot read the settings", { try settings.autoDownload(podcast: found.id) }) else { continue }
            let count = try episodes.read { try $0.arrivedEpisodes(podcast: found.id) }.count
            guard count > 0 else { continue }
            context.errors.line("monsoon: \(found.name): \(count) episode\(count == 1 ? "" : "s") arrived before auto-download was on; "
                                + "queue \(count == 1 ? "it" : "them") with 'monsoon queue add --new --podcast \(found.id)'")
        }
    }
}

struct ConfigUnset: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "unset", abstract: "Return a setting to its default (or a podcast's to the global value).", discussion: "Examples:\n\n  monsoon config unset template")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: SettingSelection
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        try await target.withSetting(global, context: context, use: .writing, failure: "cannot save the setting") { settings, key, id in
            try settings.unset(key, podcast: id)
            if !global.quiet { context.output.line("\(key.rawValue) = \(Config.shown(key, try settings.effective(key, podcast: id)))") }
        }
    }
}
