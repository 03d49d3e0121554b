import Foundation
import MonsoonEngine

/// `monsoon download`: run the home's queue until nothing is left.
struct RunQueue: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Run the download queue until nothing is left.",
        discussion: """
            Downloads that were running when monsoon last stopped resume from their part files; \
            those waiting to retry keep their time. Only one monsoon downloads per home: another \
            terminal can follow and steer it with 'monsoon downloads', 'pause', 'resume', 'retry', \
            'remove' and 'priority'.
            """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var transfer: TransferOptions

    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let home = try Home(option: global.home, context: context)
        guard let lock = try HomeLock(path: home.lockPath) else {
            let pid = HomeLock.holder(at: home.lockPath).map { " (pid \($0))" } ?? ""
            throw CLIError(message: "another monsoon\(pid) is already downloading in \(home.path); follow it with 'monsoon downloads'")
        }
        defer { withExtendedLifetime(lock) {} }
        let manager = try QueueRun.openManager(home, configuration: transfer.configuration(scope: .wholeQueue))
        let session = QueueRun(manager, context: context, global: global)
        // Counts, not every download: a queue of a hundred thousand costs nothing here.
        let active = await manager.counts().filter { $0.key.isActive }.values.reduce(0, +)
        if active == 0 {
            await manager.shutdown()
            if !global.quiet { context.errors.line("monsoon: nothing to download") }
            return ExitStatus.success
        }
        let reporter = GetReporter(context: context, quiet: global.quiet, verbose: global.verbose, expected: active)
        return await session.run(reporting: reporter)
    }
}
