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
        do {
            for url in urls {
                plan.add(url, existing: try store.downloads(of: url).last { Self.isIn(folder, $0) }, folder: folder, skipExisting: skipExisting)
            }
            for id in plan.retried { try store.post(.retry(id)) }
            ids = try store.add(plan.requests(folder: folder))
            if !ids.isEmpty { try store.post(.adoptNewDownloads) }
            // A `get` that runs the queue starts only its own downloads: these are claimed
            // for as long as this process lives (a claim of a dead process is ignored).
            for id in ids + plan.activeIDs + plan.retried { try store.post(.claim(id, by: getpid())) }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(message: "cannot hand the downloads to the running monsoon: \(error)")
        }
        report(plan, fresh: ids, to: reporter, context: context)
        let handed = ids + plan.activeIDs + plan.retried
        let pid = HomeLock.holder(at: home.lockPath).map { " (pid \($0))" } ?? ""
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
        return try await follow(reporter, store: store, home: home, context: context)
    }

    /// Follows this command's downloads in the database until each is done, failed,
    /// paused or removed. When the lock comes free first (the running monsoon ended or was
    /// killed), takes the queue over and runs what is left here.
    private func follow(_ reporter: GetReporter, store: DownloadStore, home: Home, context: CommandContext) async throws -> Int32 {
        var lastChange = -1
        var lastDraw = Date.distantPast
        while true {
            if context.interruption.isTriggered {
                // As if this command ran them: they stop, keeping their parts, and stay queued.
                do {
                    for id in reporter.unsettled { try store.post(.release(id)) }
                } catch {
                    context.error("could not ask the running monsoon to stop this command's downloads: \(error)")
                }
                reporter.finish(interrupted: true)
                return ExitStatus.interrupted
            }
            if let lock = try HomeLock(path: home.lockPath) {
                defer { withExtendedLifetime(lock) {} }
                // What the last runner did before it ended, then what is left is run here.
                try Self.read(reporter, from: store)
                if !reporter.unsettled.isEmpty { return try await takeOver(reporter, home: home, context: context) }
            } else {
                let change: Int
                do { change = try store.changeCounter() } catch { throw CLIError(message: "cannot follow the downloads in the queue: \(error)") }
                if change != lastChange {
                    lastChange = change
                    try Self.read(reporter, from: store)
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
    private func takeOver(_ reporter: GetReporter, home: Home, context: CommandContext) async throws -> Int32 {
        let manager = try QueueRun.openManager(home, configuration: transfer.configuration(scope: .claimedOnly, home: home, jobs: 4))
        let session = QueueRun(manager, context: context, global: global)
        do {
            try await manager.claim(reporter.unsettled)
        } catch {
            await manager.shutdown()
            throw CLIError(message: "cannot take over the downloads: \(error)")
        }
        if global.verbose { context.error("the monsoon that ran the queue has stopped; this command runs its downloads itself") }
        return await session.run(reporting: reporter)
    }
}
