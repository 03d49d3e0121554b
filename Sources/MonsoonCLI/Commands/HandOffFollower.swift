import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonPodcasts

/// A command whose downloads another process runs (`get`, `archive` and `sync` while a
/// monsoon downloads): follows them through the database to the end, printing as if it
/// ran them, and takes the queue over if that process ends or is killed first.
struct HandOffFollower {
    let global: GlobalOptions
    let transfer: TransferOptions
    let home: Home
    let store: any QueueStore
    let reporter: GetReporter
    let context: CommandContext
    /// Downloads at once after a takeover, when `-j` is not given (nil: the setting).
    var jobs: Int?
    /// Sees every event after a takeover (run reports, episode state).
    var observe: (@Sendable (DownloadEvent) -> Void)? = nil
    /// The largest file a download may make after a takeover (`archive --max-size`).
    var maxFileBytes: Int? = nil

    /// Follows this command's downloads in the database until each is done, failed,
    /// paused or removed. When the lock comes free first (the running monsoon ended or was
    /// killed), takes the queue over and runs what is left here.
    ///
    /// Rows are read only once the runner took the commands up to `handedThrough`: before
    /// that, a download to retry still shows its old end (failed, paused, complete).
    func follow(handedThrough: Int, retried: Set<DownloadID>) async throws -> Int32 {
        // Ctrl-C is this follower's to handle: it lets go of its downloads and says so.
        try await context.interruption.handling { try await followHandlingInterruption(handedThrough: handedThrough, retried: retried) }
    }

    private func followHandlingInterruption(handedThrough: Int, retried: Set<DownloadID>) async throws -> Int32 {
        reporter.follow(true)
        var lastChange = -1
        var lastDraw = Date.distantPast
        var taken = false
        while true {
            if context.interruption.isTriggered {
                return await interrupt()
            }
            if !HomeLock.isHeld(at: home.lockPath), let lock = try HomeLock(path: home.lockPath, role: .get) {
                defer { withExtendedLifetime(lock) {} }
                // The runner ended (or was killed): what it did first, then what is left runs here.
                // It may have taken the commands and finished since the last look.
                if !taken { taken = try CLIError.prefixing(Self.cannotFollow) { try !store.hasPendingCommands(through: handedThrough) } }
                if taken { try Self.read(reporter, from: store) }
                if !reporter.unsettled.isEmpty {
                    return try await takeOver(retried: retried.filter(reporter.unsettled.contains))
                }
            } else {
                if !taken { taken = try CLIError.prefixing(Self.cannotFollow) { try !store.hasPendingCommands(through: handedThrough) } }
                let change = try CLIError.prefixing(Self.cannotFollow) { try store.changeCounter() }
                if taken && change != lastChange {
                    lastChange = change
                    try Self.read(reporter, from: store)
                }
            }
            if reporter.unsettled.isEmpty {
                // Sidecars and hooks end before the summary, which counts their failures.
                if await reporter.settle(interrupted: false) {
                    reporter.finish(interrupted: true)
                    return ExitStatus.interrupted
                }
                reporter.finish(interrupted: false)
                return reporter.exitStatus()
            }
            if Date().timeIntervalSince(lastDraw) >= 0.25 {
                reporter.redraw()
                lastDraw = Date()
            }
            // Another process's commits cannot wake this one: look a few times a second.
            try? await Task.sleep(nanoseconds: 100_000_000)   // cancellation only ends the wait early
        }
    }

    /// Ctrl-C while following: as if this command ran them, its downloads stop (their parts
    /// kept) and stay queued, unless the runner is a `monsoon download`, which runs
    /// everything queued anyway.
    private func interrupt() async -> Int32 {
        do {
            try store.post(reporter.unsettled.map { .release($0, by: getpid()) })
        } catch {
            context.error("could not ask the running monsoon to stop this command's downloads: \(error)")
        }
        if let holder = HomeLock.holder(at: home.lockPath), holder.role == .download, holder.isAlive {
            context.error("stopped following: the running 'monsoon download'\(holder.mention) goes on with these downloads; follow them with 'monsoon downloads'")
        }
        _ = await reporter.settle(interrupted: true)
        reporter.finish(interrupted: true)
        return ExitStatus.interrupted
    }

    private static let cannotFollow = "cannot follow the downloads in the queue"

    private static func read(_ reporter: GetReporter, from store: any QueueStore) throws {
        let unsettled = reporter.unsettled
        let rows = try CLIError.prefixing(cannotFollow) { try store.downloads(withIDs: unsettled) }

        for download in rows {
            reporter.handle(.statusChanged(download))
            reporter.handle(.progress(id: download.id, bytes: download.bytes, total: download.total))
        }
        let present = Set(rows.map(\.id))
        for id in unsettled where !present.contains(id) { reporter.handle(.removed(id)) }
    }

    /// The process that ran the queue is gone: run this command's unfinished downloads here.
    /// `retried`: downloads handed over to be retried, whose command the runner may not have taken.
    private func takeOver(retried: Set<DownloadID>) async throws -> Int32 {
        var configuration = try transfer.configuration(scope: .claimedOnly, home: home, context: context, jobs: jobs)
        configuration.maxFileBytes = maxFileBytes
        let manager = try await QueueRun.openManager(home, configuration: configuration)
        let session = QueueRun(manager, context: context, global: global)
        do {
            // Restoring may finish some (killed between a rename and its row): read them first.
            _ = try await manager.counts()
            try Self.read(reporter, from: store)
            reporter.follow(false)
            try await manager.claim(reporter.unsettled)
            // Retrying a download that already runs again is a no-op: safe if the runner took it.
            try await manager.retry(retried.sorted(by: { $0.rawValue < $1.rawValue }))
        } catch {
            throw await QueueRun.shutDown(manager, failing: CLIError(error, "cannot take over the downloads"), context: context)
        }
        if global.verbose { context.error("the monsoon that ran the queue has stopped; this command runs its downloads itself") }
        return await session.run(reporting: reporter, observe: observe)
    }
}
