import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

struct Storage: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage",
        abstract: "Show the disk space of downloaded episodes, per podcast and in all.",
        discussion: "Sizes are read from the files themselves (as 'du -b' counts them); a file that was moved away or deleted shows as missing." + "\n\nExamples:\n\n  monsoon storage\n  monsoon storage --json")
    @OptionGroup var global: GlobalOptions
    @Flag("--json", help: "Print JSON: podcasts (id, title, episodes, bytes, files: episode, title, path, bytes or null), totalBytes, missing.") var json = false
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let files = try EpisodeFileSession.open(global, context: context, use: .reading)
        let entries = try files.run { try $0.entries() }
        let groups = Dictionary(grouping: entries, by: \.podcastID).sorted { $0.key < $1.key }
        let total = entries.reduce(0) { $0 + ($1.bytes ?? 0) }
        let missing = entries.filter { $0.bytes == nil }.count
        if json {
            let podcasts = groups.map { id, items in
                let files = items.map {
                    "{\"episode\": \($0.episodeID), \"title\": \(LibraryJSON.string($0.title)), \"path\": \(JSONText.string($0.path)), \"bytes\": \(LibraryJSON.int($0.bytes))}"
                }
                return "{\"id\": \(id), \"title\": \(JSONText.string(items[0].podcastTitle)), \"episodes\": \(items.count), "
                    + "\"bytes\": \(items.reduce(0) { $0 + ($1.bytes ?? 0) }), \"files\": [\(files.joined(separator: ", "))]}"
            }
            context.output.write("{\"podcasts\": [\(podcasts.joined(separator: ",\n  "))], \"totalBytes\": \(total), \"missing\": \(missing)}\n")
            return ExitStatus.success
        }
        if entries.isEmpty {
            if !global.quiet { context.output.line("no episode is downloaded") }
            return ExitStatus.success
        }
        var text = ""
        for (id, items) in groups {
            let bytes = items.reduce(0) { $0 + ($1.bytes ?? 0) }
            text += "\(String(id).padded(to: 5)) \(ByteCount.format(bytes).padded(to: 10)) "
                + "\(items[0].podcastTitle) (\(items.count) episode\(items.count == 1 ? "" : "s"))\n"
            for item in items where item.bytes == nil {
                text += "      missing    episode \(item.episodeID): \(item.path)\n"
            }
        }
        text += "total \(ByteCount.format(total)) (\(total) bytes) in \(entries.count - missing) file\(entries.count - missing == 1 ? "" : "s")"
        text += missing > 0 ? "; \(missing) missing\n" : "\n"
        context.output.write(text)
        return ExitStatus.success
    }
}

struct Delete: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete episodes' downloaded files and mark them not downloaded.",
        discussion: """
            Give episode ids, or --podcast PODCAST (all its downloads), or --played (every played \
            episode's download; with --podcast, that podcast's).

            Examples:

              monsoon delete 42 43
              monsoon delete --played
              monsoon delete --podcast "Morning Show"
            """)
    @OptionGroup var global: GlobalOptions
    @Option("--podcast", help: "The downloads of this podcast (id or a unique part of its title).", valueName: "podcast", completion: .podcasts) var podcast: String?
    @Flag("--played", help: "Only played episodes.") var played = false
    @Argument(help: "Episode ids.", valueName: "episode") var episodes: [Int] = []
    init() {}

    mutating func validate() throws {
        if episodes.isEmpty && podcast == nil && !played { throw ValidationError("give episode ids, --podcast PODCAST or --played") }
        if !episodes.isEmpty && (podcast != nil || played) { throw ValidationError("give episode ids, or --podcast/--played, not both") }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try EpisodeFileSession.open(global, context: context)
        let podcastID = try await LibrarySession.podcastID(podcast, global: global, context: context)
        let deletion = try session.run { files -> EpisodeFiles.Deletion in
            var ids = episodes
            if played {
                ids = try files.downloadedAndPlayed(podcast: podcastID)
            } else if let podcastID {
                ids = try files.downloaded(podcast: podcastID)
            }
            return try files.delete(ids)
        }
        for (id, why) in deletion.skipped { context.error("episode \(id) left alone: \(why)") }
        for warning in deletion.warnings { context.error("warning: \(warning)") }
        if !global.quiet {
            context.output.line("deleted \(deletion.episodes.count) episode download\(deletion.episodes.count == 1 ? "" : "s"), freeing \(ByteCount.format(deletion.bytes))")
        }
        return deletion.skipped.isEmpty ? ExitStatus.success : ExitStatus.failure
    }
}

struct Played: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "played",
        abstract: "Mark episodes played (with auto-delete-played on, their downloads are deleted).", discussion: "Examples:\n\n  monsoon played 42")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Episode ids.", valueName: "episode") var episodes: [Int]
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        try await Played.mark(episodes, played: true, global: global, context: context)
    }

    static func mark(_ episodes: [Int], played: Bool, global: GlobalOptions, context: CommandContext) async throws -> Int32 {
        let session = try EpisodeFileSession.open(global, context: context)
        let freed = try session.run { files -> EpisodeFiles.Deletion in
            try files.setPlayed(episodes, played)
            return played ? try files.applyRetention(session.settings, keepLatest: false) : EpisodeFiles.Deletion()
        }
        if !global.quiet {
            var line = "marked \(episodes.count) episode\(episodes.count == 1 ? "" : "s") \(played ? "played" : "unplayed")"
            if !freed.episodes.isEmpty { line += "; deleted \(freed.episodes.count) download\(freed.episodes.count == 1 ? "" : "s") (\(ByteCount.format(freed.bytes))) as auto-delete-played asks" }
            context.output.line(line)
        }
        return ExitStatus.success
    }
}

struct Unplayed: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "unplayed", abstract: "Mark episodes not played.", discussion: "Examples:\n\n  monsoon unplayed 42 43")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Episode ids.", valueName: "episode") var episodes: [Int]
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        try await Played.mark(episodes, played: false, global: global, context: context)
    }
}

/// The downloaded files of a home's episodes, for one command.
struct EpisodeFileSession {
    let files: EpisodeFiles
    let settings: Settings

    static func open(_ global: GlobalOptions, context: CommandContext, use: Home.Use = .writing) throws -> EpisodeFileSession {
        let home = try Home(option: global.home, context: context, use: use)
        do {
            return try home.openDatabase { EpisodeFileSession(files: try EpisodeFiles(database: $0), settings: try Settings(database: $0)) }
        } catch {
            throw CLIError(error)
        }
    }

    /// Adds the episodes downloaded into an archive's folder (by `sync`, `download`) to its
    /// manifest, as `archive` would list them; says each folder it could not update.
    /// - Returns: false when one could not be updated.
    static func addDownloadsToManifests(_ global: GlobalOptions, context: CommandContext) throws -> Bool {
        let update = try open(global, context: context).run { try $0.addDownloadsToManifests() }
        for failure in update.failures { context.error(failure) }
        return update.failures.isEmpty
    }

    /// Runs `body` with Monsoon's one-line errors.
    func run<T>(_ body: (EpisodeFiles) throws -> T) throws -> T {
        do { return try body(files) } catch let error as LibraryError {
            throw CLIError(message: error.description)
        } catch let error as EpisodeFileError {
            throw CLIError(message: error.message)
        } catch {
            throw CLIError(message: "cannot update the episodes: \(error)")
        }
    }
}
