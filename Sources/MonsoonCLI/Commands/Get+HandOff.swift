import Foundation
import MonsoonPodcasts
import MonsoonEngine

/// A `get` while another process runs the home's queue: hand the URLs over, then follow
/// them through the database to the end, taking the queue over if that process ends first.
extension Get {
    func handOff(_ urls: [URL], folder: String, home: Home, reporter: GetReporter, context: CommandContext) async throws -> Int32 {
        let store = try home.openStore()
        var plan = Plan()
        let ids: [DownloadID]
        var lastCommand = 0
        do {
            for url in urls {
                plan.add(url, existing: try store.downloads(of: url).last { Self.isIn(folder, $0) }, folder: folder, skipExisting: skipExisting)
            }
            for id in plan.retried { lastCommand = try store.post(.retry(id)) }
            ids = try store.add(plan.requests(folder: folder))
            if !ids.isEmpty { lastCommand = try store.post(.adoptNewDownloads) }
            // A `get` that runs the queue starts only its own downloads: these are claimed
            // for as long as this process lives (a claim of a dead process is ignored).
            for id in ids + plan.activeIDs + plan.retried { lastCommand = try store.post(.claim(id, by: getpid())) }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(message: "cannot hand the downloads to the running monsoon: \(error)")
        }
        report(plan, fresh: ids, to: reporter, context: context)
        let handed = ids + plan.activeIDs + plan.retried
        let pid = HomeLock.holder(at: home.lockPath)?.mention ?? ""
        if noWait {
            // Handed over is all this asks for; only input that was not a URL fails it.
            let status = reporter.tally.notURLs > 0 ? ExitStatus.usage : ExitStatus.success
            guard !handed.isEmpty else { return status }
            try await Control.waitUntilTaken(store, otherwise: "the running monsoon did not take the downloads within 10 s; they are queued (\(handed.map(\.rawValue).joined(separator: ", "))): run 'monsoon download' when it has stopped")
            if !global.quiet {
                context.error("another monsoon\(pid) is downloading in \(home.path): handed it \(handed.count) download\(handed.count == 1 ? "" : "s") (\(handed.map(\.rawValue).joined(separator: ", "))); follow them with 'monsoon downloads'")
            }
            return status
        }
        if !handed.isEmpty && (global.verbose || (context.isTerminal && !global.quiet)) {
            context.error("another monsoon\(pid) is downloading in \(home.path); it runs \(handed.count == 1 ? "this download" : "these \(handed.count) downloads") and this command follows \(handed.count == 1 ? "it" : "them")")
        }
        return try await follow(reporter, store: store, home: home, handedThrough: lastCommand, retried: Set(plan.retried), context: context)
    }

    /// Follows this command's downloads in the database until each is done, failed,
    /// paused or removed. When the lock comes free first (the running monsoon ended or was
    /// killed), takes the queue over and runs what is left here.
    ///
    /// Rows are read only once the runner took the commands up to `handedThrough`: before
    /// that, a download to retry still shows its old end (failed, paused, complete).
    private func follow(_ reporter: GetReporter, store: DownloadStore, home: Home, handedThrough: Int, retried: Set<DownloadID>,
                        context: CommandContext) async throws -> Int32 {
        var lastChange = -1
        var lastDraw = Date.distantPast
        var taken = false
        while true {
            if context.interruption.isTriggered {
                return interrupt(reporter, store: store, home: home, context: context)
            }
            if !HomeLock.isHeld(at: home.lockPath), let lock = try HomeLock(path: home.lockPath, role: .get) {
                defer { withExtendedLifetime(lock) {} }
                // The runner ended (or was killed): what it did first, then what is left runs here.
                if taken { try Self.read(reporter, from: store) }
                if !reporter.unsettled.isEmpty {
                    return try await takeOver(reporter, home: home, retried: retried.filter(reporter.unsettled.contains), context: context)
                }
            } else {
                do {
                    if !taken { taken = try !store.hasPendingCommands(through: handedThrough) }
                    let change = try store.changeCounter()
                    if taken && change != lastChange {
                        lastChange = change
                        try Self.read(reporter, from: store)
                    }
                } catch let error as CLIError {
                    throw error
                } catch {
                    throw CLIError(message: "cannot follow the downloads in the queue: \(error)")
                }
            }
            if reporter.unsettled.isEmpty {
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
    private func interrupt(_ reporter: GetReporter, store: DownloadStore, home: Home, context: CommandContext) -> Int32 {
        do {
            for id in reporter.unsettled { try store.post(.release(id, by: getpid())) }
        } catch {
            context.error("could not ask the running monsoon to stop this command's downloads: \(error)")
        }
        if let holder = HomeLock.holder(at: home.lockPath), holder.role == .download, holder.isAlive {
            context.error("stopped following: the running 'monsoon download'\(holder.mention) goes on with these downloads; follow them with 'monsoon downloads'")
        }
        reporter.finish(interrupted: true)
        return ExitStatus.interrupted
    }

    /// Tells the reporter what the store says of its unsettled downloads; a missing one was removed.
    private static func read(_ reporter: GetReporter, from store: DownloadStore) throws {
        let unsettled = reporter.unsettled
        let rows: [Download]
        do { rows = try store.downloads(withIDs: unsettled) } catch { throw CLIError(message: "cannot follow the downloads in the queue: \(error)") }
        for download in rows {
            reporter.handle(.statusChanged(download))
            reporter.handle(.progress(id: download.id, bytes: download.bytes, total: download.total))
        }
        let present = Set(rows.map(\.id))
        for id in unsettled where !present.contains(id) { reporter.handle(.removed(id)) }
    }

    /// The process that ran the queue is gone: run this command's unfinished downloads here.
    /// `retried`: downloads handed over to be retried, whose command the runner may not have taken.
    private func takeOver(_ reporter: GetReporter, home: Home, retried: Set<DownloadID>, context: CommandContext) async throws -> Int32 {
        let manager = try QueueRun.openManager(home, configuration: transfer.configuration(scope: .claimedOnly, home: home, context: context, jobs: 4))
        let session = QueueRun(manager, context: context, global: global)
        do {
            try await manager.claim(reporter.unsettled)
            // Retrying a download that already runs again is a no-op: safe if the runner took it.
            for id in retried.sorted(by: { $0.rawValue < $1.rawValue }) { try await manager.retry(id) }
        } catch {
            await manager.shutdown()
            throw CLIError(message: "cannot take over the downloads: \(error)")
        }
        if global.verbose { context.error("the monsoon that ran the queue has stopped; this command runs its downloads itself") }
        return await session.run(reporting: reporter)
    }
}
