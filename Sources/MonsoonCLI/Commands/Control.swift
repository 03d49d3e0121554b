import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// What `pause`, `resume`, `retry`, `remove` and `priority` share: apply a command
/// to the home's queue, through the running monsoon when there is one.
enum Control {
    static func apply(_ command: DownloadCommand, id: DownloadID?, global: GlobalOptions, context: CommandContext) async throws -> Int32 {
        let home = try Home(option: global.home, context: context)
        let store = try home.openStore()
        if let id {
            guard let download = try store.download(withID: id) else {
                if let episode = EpisodeQueue.episodeID(of: id) {
                    throw CLIError(message: "episode \(episode) has no download; queue it with 'monsoon queue add \(episode)', then run 'monsoon download'")
                }
                throw CLIError(message: "no download has id \(id.rawValue); list them with 'monsoon downloads'")
            }
            try refuseIfComplete(command, download)
        } else if let nothing = try nothingToDo(command, store) {
            if !global.quiet { context.output.line(nothing) }
            return ExitStatus.success
        }
        // An episode's download: the episode says where it stands before the download goes.
        let episode = id.flatMap(EpisodeQueue.episodeID(of:))
        if let episode, case .remove = command { try EpisodeSession.open(global, context: context).write { try $0.reconcile(episodes: [episode]) } }
        let here = try await perform([command], home: home, store: store)
        if let episode, case .remove(_, let deleteFile) = command {
            try EpisodeSession.open(global, context: context).write { try $0.downloadRemoved(episode: episode, fileDeleted: deleteFile) }
        }
        if !global.quiet {
            if here {
                context.output.line(describe(command, after: try? store.download(withID: id ?? DownloadID(""))))   // the status is a courtesy
            } else {
                let pid = HomeLock.holder(at: home.lockPath)?.mention ?? ""
                context.output.line(describe(command, after: nil) + " by the running monsoon\(pid)")
            }
        }
        return ExitStatus.success
    }

    /// Applies `commands` in order: through the running monsoon when there is one (posted,
    /// then waited for until taken), else here with an engine that starts nothing, so the
    /// engine's own rules apply either way.
    /// - Returns: true when applied here, false when the running monsoon took them.
    @discardableResult
    static func perform(_ commands: [DownloadCommand], home: Home, store: any QueueStore) async throws -> Bool {
        guard !commands.isEmpty else { return true }
        guard let lock = try await HomeLock.acquire(path: home.lockPath, role: .brief) else {
            try CLIError.prefixing("cannot post the change to the running monsoon") {
                _ = try store.post(commands)
            }

            try await waitUntilTaken(store, otherwise: "the running monsoon did not take the change within 10 s; it is posted and will apply when it does")
            return false
        }
        defer { withExtendedLifetime(lock) {} }
        var configuration = EngineConfiguration()
        configuration.maxConcurrentDownloads = 0
        let manager = try await QueueRun.openManager(home, configuration: configuration, watches: false)
        do {
            for command in commands {
                switch command {
                case .pause(let id): try await manager.pause(id)
                case .resume(let id): try await manager.resume(id)
                case .retry(let id): try await manager.retry([id])
                case .remove(let id, let deleteFile): try await manager.remove(id, deleteFile: deleteFile)
                case .setPriority(let id, let priority): try await manager.setPriority(priority, for: id)
                case .pauseAll: try await manager.pauseAll()
                case .resumeAll: try await manager.resumeAll()
                case .adoptNewDownloads, .claim, .release: break
                }
            }
        } catch {
            // Each command's own save answered it: a save failing at shutdown too is on the same
            // database, so the command's error says why; a full disk makes the exit status 3.
            let saving = await QueueRun.shutDown(manager)
            throw CLIError(message: "\(error)", status: saving?.status == ExitStatus.diskFull ? ExitStatus.diskFull : ExitStatus.failure)
        }
        if let failure = await QueueRun.shutDown(manager) { throw failure }
        return true
    }

    /// A completed download has nothing to pause, resume or retry: say so and change
    /// nothing. (Retry fetches it again when its file has gone.)
    private static func refuseIfComplete(_ command: DownloadCommand, _ download: Download) throws {
        guard download.status == .completed else { return }
        let verb: String
        switch command {
        case .pause: verb = "pause"
        case .resume: verb = "resume"
        case .retry:
            if let path = download.filePath, !FileManager.default.fileExists(atPath: path) { return }
            verb = "retry"
        default: return
        }
        let file = download.filePath.map { " (\($0))" } ?? ""
        throw CLIError(message: "\(download.id.rawValue) is already complete\(file); nothing to \(verb)")
    }

    /// What `pause --all` and `resume --all` say when they find nothing to act on.
    private static func nothingToDo(_ command: DownloadCommand, _ store: any QueueStore) throws -> String? {
        let counts = try CLIError.prefixing("cannot read the download queue") { try store.counts() }
        switch command {
        case .pauseAll where counts.filter({ $0.key.isActive }).values.reduce(0, +) == 0:
            return "nothing to pause: no download is queued, running or waiting to retry"
        case .resumeAll where (counts[.paused] ?? 0) == 0:
            return "nothing to resume: no download is paused"
        default:
            return nil
        }
    }

    /// Waits (up to 10 s) until the running monsoon has taken every posted command. Another
    /// process's commit cannot wake this one, so it looks at the table a few times a second.
    static func waitUntilTaken(_ store: any QueueStore, otherwise message: String) async throws {
        let deadline = Date().addingTimeInterval(10)
        while try store.hasPendingCommands(through: .max) {
            if Date() > deadline { throw CLIError(message: message) }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
    }

    static func describe(_ command: DownloadCommand, after download: Download?) -> String {
        let status = download.map { " (now \($0.status.rawValue))" } ?? ""
        switch command {
        case .pause(let id): return "\(id.rawValue): paused\(status)"
        case .resume(let id): return "\(id.rawValue): resumed\(status)"
        case .retry(let id): return "\(id.rawValue): queued to retry\(status)"
        case .remove(let id, let deleteFile): return "\(id.rawValue): removed\(deleteFile ? ", file deleted" : "")"
        case .setPriority(let id, let priority): return "\(id.rawValue): priority \(priority)"
        case .pauseAll: return "all downloads paused"
        case .resumeAll: return "all paused downloads resumed"
        case .adoptNewDownloads: return "new downloads taken in"
        case .claim(let id, _): return "\(id.rawValue): claimed"
        case .release(let id, _): return "\(id.rawValue): released"
        }
    }

    /// Ids for a message: all of a few, else the first and last few with how many there are
    /// (a list of 8,000 URLs would otherwise make one 45 KB line).
    static func mention(_ ids: [DownloadID]) -> String {
        let names = ids.map(\.rawValue)
        guard names.count > 8 else { return names.joined(separator: ", ") }
        return names.prefix(3).joined(separator: ", ") + ", … " + names.suffix(2).joined(separator: ", ") + " (\(names.count) in all)"
    }

    /// Accepts a download id (`d17`), an episode id (`42`, the id `monsoon episodes` lists)
    /// or an episode's download id (`e42`).
    static func parseID(_ text: String) throws -> DownloadID {
        let prefix = text.first.map(String.init) ?? ""
        let digits = prefix == "d" || prefix == "e" ? String(text.dropFirst()) : text
        guard let number = Int(digits), number > 0, digits.allSatisfy(\.isNumber) else {
            throw ValidationError("'\(text)' is not a download id (like d17) or an episode id (like 42)")
        }
        return DownloadID("\(prefix == "d" ? "d" : "e")\(number)")
    }
}

struct Pause: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause a download (keeping its bytes), or all with --all.", discussion: "Examples:\n\n  monsoon pause d17\n  monsoon pause 42          # episode 42's download\n  monsoon pause --all")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: DownloadSelection
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        try await selection.apply(DownloadCommand.pause, all: .pauseAll, global: global, context: context)
    }
}

struct Resume: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume a paused or failed download, or all paused ones with --all.", discussion: "Examples:\n\n  monsoon resume d17\n  monsoon resume --all")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: DownloadSelection
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        try await selection.apply(DownloadCommand.resume, all: .resumeAll, global: global, context: context)
    }
}

struct Retry: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "retry", abstract: "Retry a failed download now, with fresh retry counts.", discussion: "Examples:\n\n  monsoon retry d17\n  monsoon retry 42")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "A download id like d17, or an episode id like 42.", valueName: "id") var id: String
    init() {}

    mutating func validate() throws { _ = try Control.parseID(id) }

    func run(_ context: CommandContext) async throws -> Int32 {
        let id = try Control.parseID(id)
        return try await Control.apply(.retry(id), id: id, global: global, context: context)
    }
}

struct Remove: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a download from the queue; its part file is deleted.", discussion: "Examples:\n\n  monsoon remove d17\n  monsoon remove d17 --delete-file")
    @OptionGroup var global: GlobalOptions
    @Flag("--delete-file", help: "Also delete the downloaded file of a completed download.") var deleteFile = false
    @Argument(help: "A download id like d17, or an episode id like 42.", valueName: "id") var id: String
    init() {}

    mutating func validate() throws { _ = try Control.parseID(id) }

    func run(_ context: CommandContext) async throws -> Int32 {
        let id = try Control.parseID(id)
        return try await Control.apply(.remove(id, deleteFile: deleteFile), id: id, global: global, context: context)
    }
}

struct Priority: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "priority", abstract: "Set a download's priority (higher starts first).", discussion: "Examples:\n\n  monsoon priority d17 10")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "A download id like d17, or an episode id like 42.", valueName: "id") var id: String
    @Argument(help: "The new priority (default priority is 0; negative is allowed).", valueName: "n") var priority: Int
    init() {}

    mutating func validate() throws { _ = try Control.parseID(id) }

    func run(_ context: CommandContext) async throws -> Int32 {
        let id = try Control.parseID(id)
        return try await Control.apply(.setPriority(id, priority), id: id, global: global, context: context)
    }
}
