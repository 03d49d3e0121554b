/// What happens to each file once it is in place (`archive`, `get`, `download`, `sync`): its
/// metadata written beside it, then a command run on it. `AfterDownload` does both.
struct AfterDownloadOptions: ParsableArguments {
    /// Hooks running at once when `--exec-jobs` is not given: a hook usually waits on a disk or a
    /// network of its own (a copy, an upload), so two overlap without crowding a small machine.
    static let defaultJobs = 2

    @Flag("--write-info-json", help: "Write FILE.info.json beside each file: the episode's and podcast's feed fields, the source and final URL, validators, size and SHA-256.")
    var writeInfoJSON = false

    @Option("--exec", help: "Run CMD after each file is in place, like find -exec: split into words (quotes and \\ as in a shell), '{}' is the file's path, MONSOON_* variables tell the rest; no shell unless CMD runs one.", valueName: "cmd")
    var exec: String?

    @Option("--exec-jobs", help: "Hooks running at once (default: 2).", valueName: "n")
    var execJobs: Int?

    init() {}

    mutating func validate() throws {
        if let exec {
            do { _ = try HookCommand(exec) } catch { throw ValidationError("--exec: \(error.message)") }
        }
        // Each runs on a thread with a connection of its own: a bound like -j's.
        if let execJobs, !(1...TransferOptions.jobsLimit).contains(execJobs) {
            throw ValidationError("--exec-jobs takes 1 to \(TransferOptions.jobsLimit) hooks at once, not \(execJobs)")
        }
        if execJobs != nil && exec == nil { throw ValidationError("--exec-jobs goes with --exec") }
    }

    /// Whether anything is to be done after a download.
    var isActive: Bool { writeInfoJSON || exec != nil }

    /// The hook, parsed (`validate` checked it).
    var hook: HookCommand? { exec.flatMap { try? HookCommand($0) } }   // validated already: never nil when given
}
