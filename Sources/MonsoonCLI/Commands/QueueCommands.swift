import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

struct EpisodeQueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "List the episode queue (the default), or add, move and remove episodes.",
        discussion: "'monsoon download' downloads the queue in this order. EPISODE is an episode id, as 'monsoon episodes' lists it." + "\n\nExamples:\n\n  monsoon queue\n  monsoon queue add --podcast \"Morning Show\" --latest 3\n  monsoon queue move 42 1",
        subcommands: [QueueList.self, QueueAdd.self, QueueMove.self, QueueRemove.self],
        defaultSubcommand: QueueList.self)
    @OptionGroup var global: GlobalOptions
    init() {}
}

struct QueueList: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the queue in order, with each episode's state and progress.", discussion: "Examples:\n\n  monsoon queue\n  monsoon queue --json")
    @OptionGroup var global: GlobalOptions
    @Flag("--json", help: "Print a JSON array: position, id, podcast, title, state, bytes, total, progress, error, retryAt.") var json = false
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try EpisodeSession.open(global, context: context, use: .reading)
        let entries = try session.read { queue in
            // The downloads' states saved since, as `episodes` (a home that cannot be written shows them as last saved).
            if !session.home.isReadOnly { try queue.reconcile() }
            return try queue.entries()
        }
        if json {
            context.output.write(LibraryJSON.array(entries.enumerated().map { Self.json($1, position: $0 + 1) }))
            return ExitStatus.success
        }
        if entries.isEmpty {
            if !global.quiet { context.output.line("the queue is empty; add episodes with 'monsoon queue add EPISODE' or 'monsoon queue add --podcast PODCAST --latest 3'") }
            return ExitStatus.success
        }
        // The name fits the terminal; the detail after it (a retry's wait, an error) is said whole, wrapped if need be.
        let table = TextTable([.init(title: "POS", width: 4), .init(title: "ID", width: 7), .init(title: "STATE", width: 12),
                               .init(title: "DONE", width: 5), .init(title: "SIZE", width: 22)],
                              name: "EPISODE", terminalWidth: context.isTerminal ? context.terminalWidth : nil)
        var text = table.header + "\n"
        for (index, entry) in entries.enumerated() {
            let progress = Self.fraction(entry).map { "\(Int(($0 * 100).rounded(.down)))%" } ?? "-"
            text += table.row([String(index + 1), String(entry.episode.id), Self.state(of: entry), progress, Self.size(of: entry)],
                              name: "\(entry.podcastTitle): \(entry.episode.title ?? "")")
            if let detail = Self.detail(of: entry) { text += "  \(detail)" }
            text += "\n"
        }
        context.output.write(text)
        return ExitStatus.success
    }

    /// What is there of the size the server gave, else the feed's length; `-` when neither is known.
    static func size(of entry: QueueEntry) -> String {
        let bytes = entry.download?.bytes ?? 0
        guard let total = entry.download?.total ?? entry.episode.declaredLength else { return bytes > 0 ? ByteCount.format(bytes) : "-" }
        return bytes > 0 ? "\(ByteCount.format(bytes)) / \(ByteCount.format(total))" : ByteCount.format(total)
    }

    /// The episode's state as the user sees it: the engine's, mapped.
    static func state(of entry: QueueEntry) -> String {
        guard let download = entry.download else { return entry.episode.downloadState.rawValue }
        switch download.status {
        case .queued, .waitingToRetry: return "queued"
        case .downloading: return "downloading"
        case .paused: return "paused"
        case .completed: return "downloaded"
        case .failed: return "failed"
        }
    }

    /// From 0 to 1, once the size is known.
    static func fraction(_ entry: QueueEntry) -> Double? {
        guard let download = entry.download, let total = download.total, total > 0 else { return nil }
        return min(1, Double(download.bytes) / Double(total))
    }

    static func detail(of entry: QueueEntry) -> String? {
        guard let download = entry.download else { return nil }
        if download.status == .waitingToRetry, let at = download.retryAt {
            return "retrying in \(max(0, Int(at.timeIntervalSinceNow.rounded(.up)))) s: \(download.error ?? "")"
        }
        if download.status == .failed { return "error: \(download.error ?? "unknown")" }
        // Queued with an error: it waits for room on its disk.
        if download.status == .queued, let error = download.error { return "waiting: \(error)" }
        return nil
    }

    static func json(_ entry: QueueEntry, position: Int) -> String {
        let download = entry.download
        let progress = fraction(entry).map(JSONText.number) ?? "null"
        return "{\"position\": \(position), \"id\": \(entry.episode.id), \"podcastID\": \(entry.episode.podcastID), \"podcast\": \(JSONText.string(entry.podcastTitle)), "
            + "\"title\": \(LibraryJSON.string(entry.episode.title)), \"state\": \"\(state(of: entry))\", \"download\": \(LibraryJSON.string(download == nil ? nil : EpisodeQueue.downloadID(ofEpisode: entry.episode.id).rawValue)), "
            + "\"bytes\": \(download?.bytes ?? 0), \"total\": \(LibraryJSON.int(download?.total ?? entry.episode.declaredLength)), \"progress\": \(progress), "
            + "\"error\": \(LibraryJSON.string(download?.status == .completed ? nil : download?.error)), \"retryAt\": \(LibraryJSON.date(download?.status == .waitingToRetry ? download?.retryAt : nil))}"
    }
}

struct QueueAdd: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add episodes to the end of the queue.",
        discussion: """
            Give episode ids, or --podcast with --all, --latest N, --since YYYY-MM-DD or --new; a podcast's episodes \
            are added oldest first. Episodes already queued stay where they are; downloaded ones are not added again. \
            --new takes those that arrived with a refresh since the podcast's last queued or downloaded episode (its \
            back catalogue aside): what auto-download would have queued, had it been on.

              monsoon queue add 42 43
              monsoon queue add --podcast "Morning Show" --latest 3
            """)
    @OptionGroup var global: GlobalOptions
    @Option("--podcast", help: "Add episodes of this podcast (id or a unique part of its title).", valueName: "podcast", completion: .podcasts) var podcast: String?
    @Flag("--all", help: "With --podcast: every episode.") var all = false
    @Option("--latest", help: "With --podcast: the N newest episodes.", valueName: "n") var latest: Int?
    @Option("--since", help: "With --podcast: the episodes published on or after this day (UTC).", valueName: "yyyy-mm-dd") var since: String?
    @Flag("--new", help: "With --podcast: the episodes that arrived since its last queued or downloaded one.") var new = false
    @Argument(help: "Episode ids.", valueName: "episode") var episodes: [Int] = []
    init() {}

    mutating func validate() throws {
        let selections = (all ? 1 : 0) + (latest == nil ? 0 : 1) + (since == nil ? 0 : 1) + (new ? 1 : 0)
        if podcast == nil {
            if episodes.isEmpty { throw ValidationError("give episode ids, or --podcast PODCAST with --all, --latest N, --since YYYY-MM-DD or --new") }
            if selections > 0 { throw ValidationError("--all, --latest, --since and --new choose episodes of a podcast; give --podcast too") }
        } else {
            if !episodes.isEmpty { throw ValidationError("give episode ids or --podcast, not both") }
            if selections != 1 { throw ValidationError("with --podcast, give one of --all, --latest N, --since YYYY-MM-DD or --new") }
        }
        if let latest, latest < 1 { throw ValidationError("--latest must be at least 1") }
        if let since, Self.day(since) == nil { throw ValidationError("'\(since)' is not a day like 2024-01-31") }
    }

    static func day(_ text: String) -> Date? {
        let parts = text.split(separator: "-").map { Int($0) }
        guard parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2],
              (1...12).contains(month), (1...31).contains(day), text.count == 10 else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        // 2024-02-31 would become 2 March: only a day that exists is one.
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try EpisodeSession.open(global, context: context)
        var ids = episodes
        if let podcast {
            // Oldest first: the order a back catalogue is heard in.
            let found = try await LibrarySession.open(global, context: context).run { library in
                let podcast = try library.findPodcast(podcast)
                return (podcast, try library.episodes(of: podcast.id))
            }
            var chosen = found.1.filter { $0.enclosureURL != nil }
            if let latest { chosen = Array(chosen.prefix(latest)) }
            if let since, let day = Self.day(since) { chosen = chosen.filter { ($0.published ?? .distantPast) >= day } }
            ids = new ? try session.read { try $0.arrivedEpisodes(podcast: found.0.id) } : chosen.reversed().map(\.id)
        }
        let added = try session.write { try $0.add(ids) }
        try await session.handOver()
        if !global.quiet {
            let skipped = ids.count - added.count
            var line = "queued \(added.count) episode\(added.count == 1 ? "" : "s")"
            if skipped > 0 { line += "; \(skipped) already queued or downloaded" }
            context.output.line(line + (added.isEmpty ? "" : "; download them with 'monsoon download'"))
        }
        return ExitStatus.success
    }
}

struct QueueMove: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "move", abstract: "Move an episode to a position in the queue (1 is the front).", discussion: "Examples:\n\n  monsoon queue move 42 1")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The episode id.", valueName: "episode") var episode: Int
    @Argument(help: "Its new position, counting from 1.", valueName: "position") var position: Int
    init() {}

    mutating func validate() throws {
        if position < 1 { throw ValidationError("positions count from 1") }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try EpisodeSession.open(global, context: context)
        try session.write { _ = try $0.move(episode, to: position) }
        try await session.handOver()
        if !global.quiet { context.output.line("episode \(episode) is now at position \(min(position, try session.read { try $0.entries().count }))") }
        return ExitStatus.success
    }
}

struct QueueRemove: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Take episodes out of the queue (a partial download is deleted; a finished file stays).", discussion: "Examples:\n\n  monsoon queue remove 42 43")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Episode ids.", valueName: "episode") var episodes: [Int]
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try EpisodeSession.open(global, context: context)
        // All or nothing in the queue first; then their unfinished downloads go (parts too).
        try session.write { try $0.remove(episodes) }
        try await session.removeUnfinishedDownloads(of: episodes)

        if !global.quiet { context.output.line("removed \(episodes.count) episode\(episodes.count == 1 ? "" : "s") from the queue") }
        return ExitStatus.success
    }
}
