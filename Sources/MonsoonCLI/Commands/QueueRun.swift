import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// Runs the queue of a manager until nothing is left or Ctrl-C, reporting as it
/// goes; shared by `get` and `download`.
struct QueueRun {
    let manager: DownloadManager
    let context: CommandContext
    let global: GlobalOptions
    /// Subscribed before any change, so the report misses nothing.
    private let events: DownloadEvents

    /// - Parameter kinds: the events the report needs (a `get` knows what it added: without
    ///   `.added`, a large enqueue builds and buffers no event per download).
    init(_ manager: DownloadManager, context: CommandContext, global: GlobalOptions, events kinds: DownloadEvent.Kinds = .all) {
        self.init(manager, subscribed: manager.events(kinds), context: context, global: global)
    }

    /// On events subscribed to already (`open(_:configuration:claiming:context:global:)`'s).
    init(_ manager: DownloadManager, subscribed events: DownloadEvents, context: CommandContext, global: GlobalOptions) {
        self.manager = manager
        self.context = context
        self.global = global
        self.events = events
    }

    /// Runs until the engine is idle (with `QueueScope.claimedOnly`: until every claimed
    /// download is done) or Ctrl-C, reporting through `reporter`.
    ///
    /// - Returns: the exit status (`GetReporter.exitStatus`), or 130 when interrupted.
    /// - Parameter observe: called with every event, in order, on the task that reads them
    ///   (episodes follow their downloads, run reports collect attempts, through it).
    /// - Parameter renewal: renews episodes' links a server refused; it sees each event first,
    ///   and the run ends once its renewed downloads are done too.
    func run(reporting reporter: GetReporter, renewing renewal: LinkRenewal? = nil, observe: (@Sendable (DownloadEvent) -> Void)? = nil) async -> Int32 {
        // Ctrl-C is this run's to handle: it stops the downloads cleanly, parts kept.
        await context.interruption.handling { await runHandlingInterruption(reporting: reporter, renewal: renewal, observe: observe) }
    }

    private func runHandlingInterruption(reporting reporter: GetReporter, renewal: LinkRenewal?, observe: (@Sendable (DownloadEvent) -> Void)?) async -> Int32 {
        let manager = self.manager
        let context = self.context
        let global = self.global
        let events = self.events
        var (interrupted, saveFailure, problem) = await withTaskGroup(of: Bool?.self) { group -> (Bool, CLIError?, String?) in
            group.addTask {
                for await event in events {
                    // A refused link being renewed is no failure yet: the download goes on, or fails with the reason.
                    if let renewal, renewal.takes(event) { continue }
                    reporter.handle(event)
                    observe?(event)
                }
                return nil
            }
            if let renewal {
                group.addTask {
                    await renewal.work()
                    return nil
                }
            }
            if context.isTerminal && !global.quiet {
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(nanoseconds: 250_000_000)   // only cancellation ends it early, which the loop checks
                        for id in reporter.unnamed {
                            do {
                                if let download = try await manager.download(withID: id) { reporter.name(download) }
                            } catch {
                                break   // the name is only shown: the row keeps its URL's until the next tick
                            }
                        }
                        reporter.redraw()
                    }
                    return nil
                }
            }
            group.addTask {
                await manager.waitUntilIdle()
                // Downloads that went on from a renewed link are more to do.
                while let renewal, await renewal.settle() { await manager.waitUntilIdle() }
                return false
            }
            group.addTask {
                await context.interruption.wait()
                return Task.isCancelled ? nil : true
            }
            var interrupted = false
            while let result = await group.next() {
                guard let result else { continue }
                interrupted = result
                break
            }
            // A row the restore could not read, a failed read of other processes' commands, a
            // refused transition: asked before the engine stops, which forgets them.
            let problem = await manager.persistenceError()
            // Ends the event stream (after its last events), saves the queue, releases curl.
            let saveFailure = await Self.shutDown(manager)
            renewal?.end()
            group.cancelAll()
            return (interrupted, saveFailure, problem.map { "\($0)" })
        }
        // Sidecars and hooks end before the summary, which counts their failures.
        interrupted = await reporter.settle(interrupted: interrupted)
        reporter.finish(interrupted: interrupted)
        let renewalProblems = renewal?.problems ?? []
        for problem in renewalProblems { context.error(problem) }
        // A save that failed, the last one included, fails the run, even one cut short by
        // Ctrl-C: the queue on disk is not what the run left, and the user must hear why.
        if let saveFailure {
            context.error(saveFailure.message)
            return reporter.exitStatus() == ExitStatus.diskFull ? ExitStatus.diskFull : saveFailure.status
        }
        // Not a save (that one is said above): the run went on, but the queue is not all it was.
        if let problem { context.error("the download queue had a problem during the run: \(problem)") }
        if interrupted { return ExitStatus.interrupted }
        let status = reporter.exitStatus()
        return (!renewalProblems.isEmpty || problem != nil) && status == ExitStatus.success ? ExitStatus.failure : status
    }

    /// Shuts `manager` down. A save it failed to make, at any moment of its life (the last one,
    /// made here, included), is the command's failure (see `saveFailure`).
    static func shutDown(_ manager: DownloadManager) async -> CLIError? {
        await manager.shutdown().map(saveFailure)
    }

    /// Shuts `manager` down after `failure` stopped the command: a save that failed too is said
    /// first (unless `failure` says it already), and a full disk makes the exit status 3.
    static func shutDown(_ manager: DownloadManager, failing failure: CLIError, context: CommandContext) async -> CLIError {
        guard let error = await manager.shutdown() else { return failure }
        let saving = saveFailure(error)
        if !failure.message.contains("\(error)") { context.error(saving.message) }
        return CLIError(message: failure.message, status: saving.status == ExitStatus.diskFull ? ExitStatus.diskFull : failure.status)
    }

    /// The command's error for a failure to save the queue: exit 3 when the disk holding the
    /// database is full (as for a download's own disk), else 1.
    static func saveFailure(_ error: Error) -> CLIError {
        CLIError(error, "could not save the download queue")
    }

    static func openManager(_ home: Home, configuration: EngineConfiguration, watches: Bool = true) async throws -> DownloadManager {
        do {
            // The settings' connection becomes the queue's: it keeps the log, and the schema is read once.
            return try await DownloadManager.open(configuration: configuration, databasePath: home.databasePath, connection: home.held.handOver(),
                                                  watchesOtherProcesses: watches)
        } catch {
            // Opening writes (the schema, the journal): a full disk there is a full disk too.
            throw CLIError(error)
        }
    }

    /// A run on a manager opened claiming `ids` (`DownloadManager.open(claiming:events:)`), whose report starts with it.
    static func open(_ home: Home, configuration: EngineConfiguration, claiming ids: [DownloadID], context: CommandContext,
                     global: GlobalOptions) async throws -> QueueRun {
        do {
            let (manager, events) = try await DownloadManager.open(configuration: configuration, databasePath: home.databasePath,
                                                                   connection: home.held.handOver(), claiming: ids)
            return QueueRun(manager, subscribed: events, context: context, global: global)
        } catch {
            throw CLIError(error)
        }
    }
}
