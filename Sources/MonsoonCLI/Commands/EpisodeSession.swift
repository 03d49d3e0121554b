import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonPodcasts

/// The episode queue of a home and the engine's queue beside it, for one command.
struct EpisodeSession {
    let home: Home
    let store: any QueueStore
    let queue: EpisodeQueue
    let settings: Settings
    let environment: [String: String]

    static func open(_ global: GlobalOptions, context: CommandContext, use: Home.Use = .writing) throws -> EpisodeSession {
        let home = try Home(option: global.home, context: context, use: use)
        do {
            return try home.openDatabase { database in
                let store = try DownloadStore(database: database)
                return EpisodeSession(home: home, store: store, queue: try EpisodeQueue(database: database, downloads: store),
                                      settings: try Settings(database: database), environment: context.environment)
            }
        } catch {
            throw CLIError(error)
        }
    }

    /// Reads through the queue, with Monsoon's one-line errors.
    func read<T>(_ body: (EpisodeQueue) throws -> T) throws -> T {
        do { return try body(queue) } catch { throw Self.failure(error, doing: "read the episode queue") }
    }

    /// Changes the queue, with Monsoon's one-line errors.
    func write<T>(_ body: (EpisodeQueue) throws -> T) throws -> T {
        do { return try body(queue) } catch { throw Self.failure(error, doing: "change the episode queue") }
    }

    /// A failure of the queue, as one line: the library's own words, else what could not be done.
    static func failure(_ error: any Error, doing what: String) -> CLIError {
        (error as? LibraryError).map { CLIError(message: $0.description) } ?? CLIError(message: "cannot \(what): \(error)")
    }

    /// The download root: `--out`, else the setting `download-root`.
    func downloadRoot(_ out: String?, context: CommandContext) throws -> String {
        if let out { return context.absolutePath(out) }
        return try settingsRoot()
    }

    /// The setting `download-root`, `~` expanded.
    func settingsRoot() throws -> String {
        let root = try CLIError.prefixing("cannot read the settings") { try settings.downloadRoot(userHome: userHome) }
        return root.standardizedPath
    }

    /// The podcasts' own folders (the setting `folder`), `~` expanded.
    func archiveFolders() throws -> [Int: String] {
        try CLIError.prefixing("cannot read the settings") { try settings.archiveFolders(userHome: userHome) }
    }

    private var userHome: String { environment["HOME"] ?? String.homeFolder ?? "/" }

    /// The downloads the episode queue asks for, named under `root`, a podcast's under its own folder as its archive
    /// names them, with its archive's extras; their URLs may lead to a private address when `allowingPrivate`
    /// (`--allow-private`) or the setting says so.
    func requests(root: String, allowingPrivate: Bool) throws -> [DownloadRequest] {
        do {
            return try ArchiveRun.requests(root: root, roots: try archiveFolders(), naming: try settings.template(), queue: queue,
                                           allowingPrivate: allowingPrivate || settings.allowPrivate())
        } catch let error as SettingError {
            throw CLIError(message: error.message)
        } catch {
            throw CLIError(message: "cannot read the episode queue: \(error)")
        }
    }

    /// With the home's lock held: adds the downloads the engine's queue lacks, and gives those
    /// it has (unless complete) their new destination, when not started, and priority.
    /// - Returns: those of them a retry can change (failed, paused, waiting or complete), in
    ///   order: one added now, or queued, is a retry's no-op, and its row need not be read for it.
    @discardableResult
    func place(_ requests: [DownloadRequest], what: String) throws -> [DownloadID] {
        do {
            var fresh: [DownloadRequest] = []
            var retriable: [DownloadID] = []
            try forEachStatus(of: requests.map(\.id)) { index, status in
                guard let status else { return fresh.append(requests[index]) }
                if status != .completed { try store.updateRequest(requests[index]) }
                if status != .queued && status != .downloading { retriable.append(requests[index].id) }
            }
            _ = try store.add(fresh)
            return retriable
        } catch {
            throw CLIError(message: "cannot queue \(what): \(error)")
        }
    }

    /// Takes the unfinished downloads of `episodes` out of the engine's queue (a running one
    /// stops, its part goes); a finished file stays.
    func removeUnfinishedDownloads(of episodes: [Int]) async throws {
        var removals: [DownloadCommand] = []
        let ids = episodes.map(EpisodeQueue.downloadID(ofEpisode:))
        try forEachStatus(of: ids) { index, status in
            if let status, status != .completed { removals.append(.remove(ids[index], deleteFile: false)) }
        }
        try await Control.perform(removals, home: home, store: store)
    }

    /// Calls `body` with the index of each of `ids` and the status the engine's queue has for it (nil: not
    /// there), read a statement's chunk at a time: a query per chunk, not one per download (ten thousand in a
    /// first archive), and no more than a chunk of them in memory.
    private func forEachStatus(of ids: [DownloadID], _ body: (Int, DownloadStatus?) throws -> Void) throws {
        for start in stride(from: 0, to: ids.count, by: DownloadStore.chunkSize) {
            let end = min(ids.count, start + DownloadStore.chunkSize)
            let known = Dictionary(try store.states(of: Array(ids[start..<end])).map { ($0.id, $0.status) }, uniquingKeysWith: { first, _ in first })
            for index in start..<end { try body(index, known[ids[index]]) }
        }
    }

    /// After a change to the episode queue: when a monsoon is running the queue, hands it the

    /// new downloads (under the setting's root) and the new order, and waits until it took them.
    /// With none running, the next `monsoon download` picks the changes up.
    /// - Parameter adding: called with the new downloads before they are added (`sync --exec`
    ///   records their hooks as owed before the running monsoon can start them).
    func handOver(adding: ([DownloadRequest]) throws -> Void = { _ in }) async throws {
        guard HomeLock.isHeld(at: home.lockPath) else { return }
        let requests = try self.requests(root: try settingsRoot(), allowingPrivate: false)
        var commands: [DownloadCommand] = []
        try CLIError.prefixing("cannot hand the episodes to the running monsoon") {
            var fresh: [DownloadRequest] = []
            for request in requests {
                if let existing = try store.download(withID: request.id) {
                    if existing.request.priority != request.priority && existing.status != .completed {
                        commands.append(.setPriority(request.id, request.priority))
                    }
                } else {
                    fresh.append(request)
                }
            }
            try adding(fresh)
            if !(try store.add(fresh)).isEmpty { commands.insert(.adoptNewDownloads, at: 0) }
        }

        try await Control.perform(commands, home: home, store: store)
    }
}
