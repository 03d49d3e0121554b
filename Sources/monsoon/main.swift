import CLibc
import FoundationEssentials
import Glibc
import Dispatch
import MonsoonCLI

// The `monsoon` binary: wires the process's streams and signals to the CLI.

// One malloc arena for every thread. Glibc gives a thread that finds the arena locked one of its
// own, up to eight per core, and each keeps the memory freed into it for its own threads: an
// archive of 10,000 episodes peaked at 70-78 MiB with them, against 54-57 with one (55-63 with
// two), for about 4 % less CPU. Memory that stays flat at scale is the choice made here.
monsoon_single_malloc_arena()

let interruption = Interruption()
// A parent may have left SIGINT or SIGTERM blocked (a test runner's thread, a service
// manager): unblocked here, before any thread starts, so Ctrl-C always reaches us.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
signal(SIGPIPE, SIG_IGN)
// SIGHUP (the terminal closed) stops cleanly too (parts kept, mpv stopped, the position saved),
// unless it was ignored when Monsoon started (`nohup monsoon download &` must go on).
var hangUp = sigaction()
sigaction(SIGHUP, nil, &hangUp)
let hangUpIgnored = unsafeBitCast(hangUp.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
// On Linux a dispatch signal source installs its own handler when resumed: no SIG_IGN first, which
// would lose a Ctrl-C at start-up (until then the default action ends the process, right that early).

// The handlers are `@Sendable`: run on this queue, not the main actor that top-level code is on.
let signalQueue = DispatchQueue(label: "monsoon.signals")
let sources = [SIGINT, SIGTERM] + (hangUpIgnored ? [] : [SIGHUP])
let handlers = sources.map { number -> DispatchSourceSignal in
    let source = DispatchSource.makeSignalSource(signal: number, queue: signalQueue)
    source.setEventHandler { @Sendable in
        // A second Ctrl-C means now: part files are already safe on disk.
        if interruption.isTriggered { exit(ExitStatus.interrupted) }
        interruption.trigger()
    }
    source.resume()
    return source
}

let isTerminal = isatty(STDOUT_FILENO) == 1
let width = isTerminal ? TerminalWidth(TerminalWidth.measure(STDOUT_FILENO) ?? 80, descriptor: STDOUT_FILENO) : TerminalWidth(80)
// A resized terminal: the width is read again (the live view redraws at it within a quarter of a
// second). Made only for a terminal: a source never resumed must not be released.
let resize: DispatchSourceSignal? = isTerminal ? {
    let source = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: signalQueue)
    source.setEventHandler { @Sendable in if let columns = TerminalWidth.measure(STDOUT_FILENO) { width.update(columns) } }
    source.resume()
    return source
}() : nil

let context = CommandContext(
    output: TextOutput(descriptor: STDOUT_FILENO),
    errors: TextOutput(descriptor: STDERR_FILENO),
    environment: ProcessInfo.processInfo.environment,
    currentDirectory: FileManager.default.currentDirectoryPath,
    isTerminal: isTerminal,
    terminalWidth: width.current,
    readStandardInput: { limit throws(BoundedInput.Failure) in try BoundedInput.read(descriptor: STDIN_FILENO, limit: limit) },
    interruption: interruption,
    keyInput: STDIN_FILENO,
    width: width
)
let arguments = Array(CommandLine.arguments.dropFirst())
// Read: the passwords among them need not stay where `ps` shows them.
ArgumentSecrets.hide(count: CommandLine.argc, in: CommandLine.unsafeArgv)
let status = await MonsoonCLI.run(arguments, context: context)
withExtendedLifetime((handlers, resize)) {}
exit(status)
