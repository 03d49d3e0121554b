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

    @Option(name: .shortAndLong, help: "Downloads running at once.", valueName: "n")
    var jobs: Int = 4

    @Option(name: .long, help: "Retries after the first attempt for transient failures.", valueName: "n")
    var retries: Int = 5

    @Option(name: .customLong("per-host"), help: "Downloads running at once to one host (default: no limit).", valueName: "n")
    var perHost: Int?

    @Option(name: .customLong("min-free"), help: "Free space to leave on the disk.", valueName: "size")
    var minFree: ByteSize = ByteSize(bytes: 64 << 20)

    init() {}

    mutating func validate() throws {
        if jobs < 1 { throw ValidationError("--jobs must be at least 1.") }
        if retries < 0 { throw ValidationError("--retries must be 0 or more.") }
        if let perHost, perHost < 1 { throw ValidationError("--per-host must be at least 1.") }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let home = try Home(option: global.home, context: context)
        guard let lock = try HomeLock(path: home.lockPath) else {
            let pid = HomeLock.holder(at: home.lockPath).map { " (pid \($0))" } ?? ""
            throw CLIError(message: "another monsoon\(pid) is already downloading in \(home.path); follow it with 'monsoon downloads'")
        }
        defer { withExtendedLifetime(lock) {} }
        var configuration = EngineConfiguration()
        configuration.maxConcurrentDownloads = jobs
        configuration.maxDownloadsPerHost = perHost
        configuration.retry.maxRetries = retries
        configuration.diskReserve = minFree.bytes
        configuration.userAgent = "Monsoon/\(MonsoonCLI.version)"
        let manager = try QueueRun.openManager(home, configuration: configuration)
        let session = QueueRun(manager, context: context, global: global)
        if await manager.counts().allSatisfy({ !$0.key.isActive || $0.value == 0 }) {
            await manager.shutdown()
            if !global.quiet { context.errors.line("monsoon: nothing to download") }
            return ExitStatus.success
        }
        return await session.run()
    }
}
