import FoundationEssentials
import Glibc
import MonsoonCluster
import MonsoonEngine

struct Worker: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run jobs from the cluster's shared queue (feeds to read, episodes to download) until stopped.",
        discussion: """
            Claims up to -j jobs at a time under a lease, renews the leases every quarter of it, \
            and records each file in the database's ledger once it is in place under -o. Every \
            worker together keeps each host's limits (cluster host). On a terminal it shows one \
            live line: jobs done, failed and running, and its speed. Ctrl-C or SIGTERM hands the \
            jobs under way back to the queue, then exits 130.

            Examples:

              monsoon worker --db postgresql://monsoon@db.example.com/monsoon -o /srv/archive -j 16
              MONSOON_DB=postgresql://db.example.com/monsoon monsoon worker -o /srv/archive --name rack2
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var database: ClusterDatabase
    @Option("-o", "--out", "--output", help: "The folder files land in, under the archive's names (required).", valueName: "dir") var out: String?
    @Option("-j", "--jobs", help: "Jobs at once (default: 4).", valueName: "n") var jobs: Int?
    @Option("--name", help: "The worker's name in the cluster, unique (default: the host's name, the process id and a random number).", valueName: "name") var name: String?
    @Option("--lease", help: "Seconds a claim holds a job before another worker may take it (default: 60).", valueName: "seconds") var lease: Double?
    @Option("--poll", help: "Seconds between looks for jobs when no notification comes (default: 2).", valueName: "seconds") var poll: Double?
    @Option("--keep-finished", help: "Days a finished job (completed, failed, dead) stays in the shared queue before the worker that leads the maintenance removes it (default: 7; the leader's setting applies).", valueName: "days") var keepFinished: Double?
    @Flag("--allow-private", help: "Let URLs from feeds lead to this machine or its own network (loopback, private, link-local addresses); by default only a feed there may.") var allowPrivate = false
    @Flag("--discard", help: "Write nothing: count and hash each body, and record it in the ledger; for measuring.") var discard = false
    @Flag("--json", help: "Print JSON lines: each job completed or failed, the progress at each tick while it works, and the summary at the stop (with the claims' round-trip times).") var json = false
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        guard let out else { throw CLIError.usage("say where files go with -o DIR") }
        if let jobs, jobs < 1 || jobs > 256 { throw CLIError.usage("-j takes 1 to 256 jobs, not \(jobs)") }
        if let lease, !(lease >= 4 && lease <= 3600) { throw CLIError.usage("--lease takes 4 to 3600 seconds") }
        if let poll, !(poll > 0 && poll <= 600) { throw CLIError.usage("--poll takes more than 0 and up to 600 seconds") }
        if let keepFinished, !(keepFinished >= 0 && keepFinished <= 36_500) { throw CLIError.usage("--keep-finished takes 0 to 36500 days") }
        let host = ProcessInfo.processInfo.hostName
        var configuration = WorkerConfiguration(database: try database.connectionString(context), folder: context.absolutePath(out),
                                                name: name ?? "\(host)-\(getpid())-\(String(UInt16.random(in: .min ... .max), radix: 16))", node: host)
        configuration.slots = jobs ?? 4
        configuration.leaseSeconds = lease ?? 60
        configuration.pollSeconds = poll ?? 2
        if let keepFinished { configuration.keepFinishedSeconds = keepFinished * 86_400 }
        configuration.discard = discard
        configuration.allowPrivate = allowPrivate
        let view = WorkerView(context: context, name: configuration.name, json: json, quiet: global.quiet)
        configuration.report = { view.message($0) }
        if json || view.style == .live { configuration.observe = { view.observe($0) } }
        let worker = ClusterWorker(configuration: configuration)
        let interruption = context.interruption
        let watcher = Task {
            await interruption.wait()
            worker.stop()
        }
        defer { watcher.cancel() }
        let summary: WorkerSummary
        do {
            summary = try await interruption.handling { try await worker.run() }
            view.finish()
        } catch let error as PostgresError {
            view.finish()
            throw error.code == .invalidConnectionString ? CLIError.usage(error.message) : CLIError(message: error.message)
        }
        if json {
            let sorted = summary.claimSeconds.sorted()
            func percentile(_ p: Double) -> String {
                sorted.isEmpty ? "null" : String(cFormat: "%.6f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
            }
            context.output.line(GetReporter.jsonLine("stopped", [
                ("worker", JSONText.string(configuration.name)), ("completed", String(summary.completed)), ("failed", String(summary.failed)),
                ("lost", String(summary.lost)), ("released", String(summary.released)), ("refreshed", String(summary.refreshed)),
                ("bytes", String(summary.bytes)), ("adoptedBytes", String(summary.adoptedBytes)), ("claims", String(sorted.count)),
                ("claimP50", percentile(0.5)), ("claimP99", percentile(0.99))]))
        } else if !global.quiet {
            context.output.line("Worker \(configuration.name): \(summary.completed) downloaded (\(ByteCount.format(Int(summary.bytes)))), \(summary.refreshed) feeds read, \(summary.failed) failed, \(summary.lost) lost to other workers, \(summary.released) handed back")
        }
        // Stopped by Ctrl-C or SIGTERM, as every command that is interrupted: its jobs are back in the queue.
        return interruption.isTriggered ? ExitStatus.interrupted : ExitStatus.success
    }
}
