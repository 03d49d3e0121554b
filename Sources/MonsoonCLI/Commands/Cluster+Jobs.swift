import FoundationEssentials
import MonsoonCluster
import MonsoonPodcasts

/// The jobs `cluster pause`, `resume` and `retry` act on: ids, a feed's, or all, exactly one.
struct ClusterJobSelection: ParsableArguments {
    @Option("--feed", help: "The jobs of this feed, by its id or its URL: its refresh and its episodes' downloads.", valueName: "feed")
    var feed: String?
    @Flag("--all", help: "Every job.")
    var all = false
    @Argument(help: "Job ids.", valueName: "job")
    var jobs: [Int] = []
    init() {}

    mutating func validate() throws {
        let given = [!jobs.isEmpty, feed != nil, all].filter { $0 }.count
        if given == 0 { throw ValidationError("give job ids, --feed FEED or --all") }
        if given > 1 { throw ValidationError("give job ids, --feed FEED or --all, not more than one of them") }
        if jobs.contains(where: { $0 < 1 }) { throw ValidationError("job ids count from 1") }
        if feed?.isEmpty == true { throw ValidationError("--feed needs a feed's id or URL") }
    }
}

/// What `cluster pause`, `resume` and `retry` do, and say.
enum ClusterJobAction: Sendable {
    case pause, resume, retry

    /// Applies the action to `selection`: ids that are no job's, or a feed there is not, fail
    /// (exit 1) before anything changes.
    func run(_ selection: ClusterJobSelection, database: ClusterDatabase, global: GlobalOptions, context: CommandContext) async throws -> Int32 {
        let (changed, subject) = try await database.withConnection(context) { connection -> (Int, Subject) in
            let admin = ClusterAdmin(connection: connection)
            let (chosen, subject) = try Self.resolve(selection, admin)
            switch self {
            case .pause: return (try admin.pause(chosen), subject)
            case .resume: return (try admin.resume(chosen), subject)
            case .retry: return (try admin.retry(chosen), subject)
            }
        }
        if !global.quiet { context.output.line(message(changed: changed, subject: subject)) }
        return ExitStatus.success
    }

    /// The selection as the queue takes it, and how messages name it.
    private static func resolve(_ selection: ClusterJobSelection, _ admin: ClusterAdmin) throws -> (JobSelection, Subject) {
        if selection.all { return (.all, .all) }
        if let reference = selection.feed {
            guard let feed = try admin.feedID(reference) else {
                throw CLIError(message: Int64(reference) == nil ? "no feed has URL \(Redaction.redact(reference))" : "no feed has id \(reference)")
            }
            return (.feed(feed), .feed(feed))
        }
        let ids = selection.jobs.map(Int64.init)
        let missing = try admin.missingJobs(ids)
        if !missing.isEmpty {
            throw CLIError(message: missing.count == 1 ? "no job has id \(missing[0])" : "no jobs have ids \(missing.map(String.init).joined(separator: ", "))")
        }
        return (.jobs(ids), .jobs(Set(ids).sorted()))
    }

    /// What a selection is called when none of its jobs was in a state to change.
    enum Subject: Sendable {
        case all
        case feed(Int64)
        case jobs([Int64])

        /// "no job of feed 3 is paused", "job 4 is not paused".
        func none(_ state: String) -> String {
            switch self {
            case .all: "no job is \(state)"
            case .feed(let feed): "no job of feed \(feed) is \(state)"
            case .jobs(let ids) where ids.count == 1: "job \(ids[0]) is not \(state)"
            case .jobs(let ids): "none of jobs \(ids.map(String.init).joined(separator: ", ")) is \(state)"
            }
        }
    }

    /// "paused 3 jobs", or why there was nothing to do.
    private func message(changed: Int, subject: Subject) -> String {
        let jobs = "\(changed) job\(changed == 1 ? "" : "s")"
        switch self {
        case .pause:
            return changed == 0 ? "nothing to pause: " + subject.none("available, scheduled or running")
                : "paused \(jobs); a running one stops at its worker's next lease renewal"
        case .resume:
            return changed == 0 ? "nothing to resume: " + subject.none("paused") : "resumed \(jobs)"
        case .retry:
            return changed == 0 ? "nothing to retry: " + subject.none("failed, dead or waiting to retry") : "queued \(jobs) to run again"
        }
    }
}

/// `cluster pause`, `resume` and `retry`: the same options, one action each.
protocol ClusterJobCommand: RunnableCommand {
    static var action: ClusterJobAction { get }
    var global: GlobalOptions { get }
    var database: ClusterDatabase { get }
    var selection: ClusterJobSelection { get }
}

extension ClusterJobCommand {
    func run(_ context: CommandContext) async throws -> Int32 {
        try await Self.action.run(selection, database: database, global: global, context: context)
    }
}

struct ClusterPause: ClusterJobCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Hold back jobs of the shared queue until 'cluster resume'.",
        discussion: """
            Jobs that are waiting (available, or scheduled to retry) or running are paused. A \
            running one is taken from its worker at once (the attempt it counted is given back); \
            the worker stops it at its next lease renewal, every 15 s by default.

            Examples:

              monsoon cluster pause 41 42
              monsoon cluster pause --feed https://example.com/feed.xml
              monsoon cluster pause --all
            """)
    static let action = ClusterJobAction.pause
    @OptionGroup var global: GlobalOptions
    @OptionGroup var database: ClusterDatabase
    @OptionGroup var selection: ClusterJobSelection
    init() {}
}

struct ClusterResume: ClusterJobCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Let paused jobs of the shared queue run again, now.",
        discussion: """
            Paused jobs become available at once, and the workers are woken.

            Examples:

              monsoon cluster resume 41 42
              monsoon cluster resume --feed 3
              monsoon cluster resume --all
            """)
    static let action = ClusterJobAction.resume
    @OptionGroup var global: GlobalOptions
    @OptionGroup var database: ClusterDatabase
    @OptionGroup var selection: ClusterJobSelection
    init() {}
}

struct ClusterRetry: ClusterJobCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Run failed and dead jobs of the shared queue again, with their attempts back.",
        discussion: """
            Failed jobs and dead ones (whose attempts were spent by workers that stopped \
            holding them) become available now, their attempts back to 0 and their errors \
            cleared; jobs waiting to retry are made due now, their attempts kept. Completed and \
            paused jobs are left as they are ('cluster resume' is for paused ones).

            Examples:

              monsoon cluster retry 41
              monsoon cluster retry --feed https://example.com/feed.xml
              monsoon cluster retry --all
            """)
    static let action = ClusterJobAction.retry
    @OptionGroup var global: GlobalOptions
    @OptionGroup var database: ClusterDatabase
    @OptionGroup var selection: ClusterJobSelection
    init() {}
}
