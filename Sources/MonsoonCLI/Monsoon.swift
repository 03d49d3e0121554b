import FoundationEssentials
import MonsoonPodcasts

protocol RunnableCommand: ParsableCommand {
    func run(_ context: CommandContext) async throws -> Int32

    /// The command watches for Ctrl-C itself from start to end and stops cleanly (130). Others
    /// are cancelled when it comes, except in the phases they run in `Interruption.handling`.
    static var handlesInterruption: Bool { get }
}

extension RunnableCommand {
    static var handlesInterruption: Bool { false }
}

public enum ExitStatus {
    public static let success: Int32 = 0
    /// Some work failed; the rest was done.
    public static let failure: Int32 = 1
    /// The command line was wrong.
    public static let usage: Int32 = 2
    /// A download failed for lack of disk space, or the disk holding the database is full.
    public static let diskFull: Int32 = 3
    /// Ctrl-C, SIGTERM, or SIGHUP.
    public static let interrupted: Int32 = 130
}


/// Options every command accepts, before or after the command's name.
struct GlobalOptions: ParsableArguments {
    @Option("--home", help: "Monsoon's data folder (default: $MONSOON_HOME, else $XDG_DATA_HOME/monsoon, else ~/.local/share/monsoon).", valueName: "dir")
    var home: String?

    @Flag("-q", "--quiet", help: "Print only errors: no progress, no per-download lines.")
    var quiet = false

    @Flag("-v", "--verbose", help: "Also print request-level detail.")
    var verbose = false

    init() {}

    mutating func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together; choose one") }
    }
}

struct Monsoon: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monsoon",
        abstract: "Archive podcasts and download files fast, safely and resumably.",
        discussion: "Run 'monsoon help <command>' for a command's options.",
        version: MonsoonCLI.version,
        subcommands: [Get.self, Archive.self, Verify.self, Sync.self, RunQueue.self, Downloads.self, Pause.self, Resume.self, Retry.self, Remove.self, Priority.self,
                      Add.self, Podcasts.self, Episodes.self, Refresh.self, Unsubscribe.self, Import.self, Export.self, Inspect.self, EpisodeQueueCommand.self, Storage.self, Delete.self, Played.self, Unplayed.self, Play.self, Position.self, Config.self, Systemd.self, Cluster.self, Worker.self, Report.self, Completions.self]
    )

    @OptionGroup var global: GlobalOptions

    init() {}
}

/// The command-line tool, callable in-process.
public enum MonsoonCLI {
    public static let version = "0.1.0"

    /// Parses `arguments` (without the program name), runs the command and
    /// returns the exit status.
    public static func run(_ arguments: [String], context: CommandContext) async -> Int32 {
        if arguments.first == CompletionScript.request {
            let answer = CompletionScript.answer(Array(arguments.dropFirst()), root: Monsoon.self, context: context)
            context.output.write(answer.candidates.map { $0 + "\n" }.joined())
            return answer.candidates.isEmpty && !answer.filesFit ? ExitStatus.failure : ExitStatus.success
        }
        switch CommandParser.parse(arguments, root: Monsoon.self) {
        case .output(let text):
            context.output.write(text.hasSuffix("\n") ? text : text + "\n")
            return ExitStatus.success
        case .usageError(let text):
            context.errors.line(text)
            return ExitStatus.usage
        case .command(let command):
            // Every command without subcommands is runnable: the declaration test checks it.
            guard let runnable = command as? any RunnableCommand else { return ExitStatus.usage }
            let path = HelpGenerator.path(to: type(of: runnable), from: Monsoon.self)
            guard !type(of: runnable).handlesInterruption else { return finish(await Result(catching: { try await runnable.run(context) }), path: path, context: context) }
            // Ctrl-C while a feed is fetched, parsed or stored: the work is cancelled and the
            // command ends at once (a phase that stops by itself is left to do so).
            let task = Task { try await runnable.run(context) }
            if await context.interruption.comesBefore(task), !context.interruption.isHandled {
                task.cancel()
                // Cancelled work ends at its next wait; a parse under way may take a moment more,
                // which is not waited for (the process ends; a transaction is all or nothing).
                _ = await Interruption.ends(task, within: 2)
                context.error("interrupted")
                return ExitStatus.interrupted
            }
            return finish(await task.result, path: path, context: context)
        }
    }

    /// The exit status of a command's result, its error said on standard error; a usage error
    /// found as the command ran is shown as the parser's are, with the usage of `path`.
    private static func finish(_ result: Result<Int32, Error>, path: [any ParsableCommand.Type], context: CommandContext) -> Int32 {
        switch result {
        case .success(let status):
            return status
        case .failure(let error as CLIError) where error.status == ExitStatus.usage:
            context.errors.line(HelpGenerator.usageError(Redaction.redactText(error.message), path: path))
            return error.status
        case .failure(let error as CLIError):
            context.error(Redaction.redactText(error.message))
            return error.status
        case .failure(let error):
            // Last safety net: no message leaves with a URL's credentials in it.
            context.error(Redaction.redactText("\(error)"))
            return ExitStatus.failure
        }
    }
}

extension Result where Failure == Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
