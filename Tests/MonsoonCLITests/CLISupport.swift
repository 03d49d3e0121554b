import CLibc
import Foundation
import MonsoonTestServer
@testable import MonsoonCLI

/// A fresh temporary folder, removed by `remove()`.
struct Folder {
    let path: String

    init() {
        let base = FileManager.default.temporaryDirectory.path(percentEncoded: false)
        path = (base as NSString).appendingPathComponent("monsoon-cli-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// The folder's entries, without the Monsoon home the tests keep in it.
    func contents(_ sub: String = "") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: file(sub))) ?? []).filter { $0 != ".monsoon" }.sorted()
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Writes `text` to `path` as an executable script, its descriptor close-on-exec from the start.
/// Foundation's `write(toFile:)` opens without it: a child another test spawns meanwhile through a
/// spawner that does not close every descriptor keeps the script open for writing for its whole
/// life, and every run of the script then fails with "Text file busy".
func writeScript(_ text: String, to path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw CLITestError("cannot create \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written >= 0, fchmod(fd, 0o755) == 0 else { throw CLITestError("cannot write \(path): \(String(cString: strerror(errno)))") }
    guard written == bytes.count else { throw CLITestError("cannot write \(path): \(written) of \(bytes.count) bytes written") }
}

/// What an in-process run printed and returned.
struct RunResult {
    var status: Int32
    var output: String
    var errors: String
}

/// Runs `monsoon` in-process, with captured output, in `directory`.
/// - Parameters:
///   - timings: the command's waits; by default the tests' short ones (``Timings/quick``).
///   - output: where standard output is captured, for a test that watches it while the command runs.
///   - errors: where standard error is captured, likewise.
func runMonsoon(_ arguments: [String], in directory: String, stdin: String = "", terminal: Bool = false, interruption: Interruption = Interruption(),
                environment: [String: String]? = nil, keyInput: Int32 = -1, timings: Timings = .quick,
                output: TextOutput = .capturing(), errors: TextOutput = .capturing()) async -> RunResult {
    let input = Data(stdin.utf8)
    var context = CommandContext(
        output: output, errors: errors, environment: environment ?? ["MONSOON_HOME": (directory as NSString).appendingPathComponent(".monsoon")],
        currentDirectory: directory,
        isTerminal: terminal, terminalWidth: 100, readStandardInput: { limit throws(BoundedInput.Failure) in try BoundedInput.read(input, limit: limit) }, interruption: interruption, keyInput: keyInput)
    context.timings = timings
    let status = await MonsoonCLI.run(arguments, context: context)
    return RunResult(status: status, output: output.text, errors: errors.text)
}

extension Timings {
    /// The waits of in-process runs: a retry comes at once and a hook that ignores SIGTERM is
    /// killed after a moment, so no test waits out a production constant (the built binary, run
    /// by the process tests, has the defaults).
    static var quick: Timings {
        var timings = Timings()
        timings.retryBase = 0.02
        timings.hookGrace = 0.2
        return timings
    }
}

/// The built `monsoon` binary, next to the test bundle.
let monsoonBinary: String = {
    let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
    for candidate in [bundle.appendingPathComponent("monsoon").path,
                      URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("monsoon").path] {
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return bundle.appendingPathComponent("monsoon").path
}()

/// A running `monsoon` process with its output collected.
///
/// Started with `posix_spawn`, an empty signal mask and no inherited descriptors but its
/// standard streams, and its output goes to files, not pipes: Foundation's `Process` passes
/// on the spawning thread's signal mask (test threads block some signals) and every open
/// descriptor, so a long-lived child could hold another child's pipe open, and a reader
/// waiting for that pipe's end stalled the whole test run.
final class MonsoonProcess: @unchecked Sendable {
    // Only touched from the test's task.
    let process: SpawnedProcess
    private let outPath = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-out-\(UUID().uuidString)"
    private let errPath = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-err-\(UUID().uuidString)"

    /// - Parameters:
    ///   - program: another program to run the same way (an example package's, say).
    ///   - extra: variables set on top of this process's environment.
    init(_ arguments: [String], in directory: String, home: String? = nil, program: String = monsoonBinary, environment extra: [String: String] = [:]) throws {
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw CLITestError(program == monsoonBinary ? "the monsoon binary is missing at \(monsoonBinary): build it with `swift build` (make test does)"
                                                        : "\(program) is missing: make test builds it")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["MONSOON_HOME"] = home ?? (directory as NSString).appendingPathComponent(".monsoon")
        environment.merge(extra) { $1 }
        process = try SpawnedProcess(program, arguments, directory: directory, environment: environment, output: outPath, errors: errPath)
    }

    func interrupt() { kill(process.processIdentifier, SIGINT) }

    /// What the process has written on standard error so far.
    var errorsSoFar: String { String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self) }

    /// What the process has written on standard output so far.
    var outputSoFar: String { String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self) }

    /// Waits for the exit, with a deadline; returns status, stdout, stderr.
    func finish(seconds: Double = 60) async throws -> RunResult {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                throw CLITestError("monsoon did not exit within \(seconds) s")
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        let output = String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self)
        let errors = String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self)
        try? FileManager.default.removeItem(atPath: outPath)   // temporary files: nothing to keep
        try? FileManager.default.removeItem(atPath: errPath)
        return RunResult(status: process.terminationStatus, output: output, errors: errors)
    }
}

/// A child started with `posix_spawn`: empty signal mask, only the standard streams open.
final class SpawnedProcess: @unchecked Sendable {
    // Only touched from the test's task.
    let processIdentifier: pid_t
    private var status: Int32?

    /// - Parameter terminal: a terminal's path (a pseudo-terminal's slave) to run on instead of
    ///   `input`, `output` and `errors`: the child gets a session of its own, whose controlling
    ///   terminal it becomes (a typed Ctrl-C and a resize reach it as from a terminal window).
    init(_ path: String, _ arguments: [String], directory: String, environment: [String: String], input: String = "/dev/null",
         output: String = "/dev/null", errors: String = "/dev/null", terminal: String? = nil) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)
        if terminal != nil { sigaddset(&defaults, SIGWINCH) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        let setsid: Int32 = terminal == nil ? 0 : 0x80   // POSIX_SPAWN_SETSID (glibc 2.26), not imported
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | setsid))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let terminal {
            // The first terminal a session leader opens becomes its controlling terminal.
            posix_spawn_file_actions_addopen(&actions, 0, terminal, O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
            posix_spawn_file_actions_adddup2(&actions, 0, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        // Every descriptor but the three is closed in the child, as the hooks' spawner does
        // (`closefrom`): a list made here would miss what another thread opens before the spawn (a
        // script a parallel test is writing, which the child then holds open for writing all its
        // life, and every run of that script fails with "Text file busy").
        let closing = monsoon_spawn_close_from(&actions, 3)
        guard closing == 0 else { throw CLITestError("cannot close descriptors for \(path): \(String(cString: strerror(closing)))") }
        // The working folder: posix_spawn has no `cd` but glibc's addchdir.
        let changing = directory.withCString { monsoon_spawn_chdir(&actions, $0) }
        guard changing == 0 else { throw CLITestError("cannot start \(path) in \(directory): \(String(cString: strerror(changing)))") }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw CLITestError("cannot start \(path): \(String(cString: strerror(result)))") }
        processIdentifier = pid
    }

    var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        if waitpid(processIdentifier, &raw, WNOHANG) == processIdentifier {
            status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        }
        return status == nil
    }

    /// The exit status (128 + the signal for a killed process); valid once `isRunning` is false.
    var terminationStatus: Int32 { status ?? -1 }

    func terminate() {
        guard isRunning else { return }
        kill(processIdentifier, SIGTERM)
    }
}

struct CLITestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func waitUntil(seconds: Double = 30, _ what: String, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { throw CLITestError("\(what) did not happen within \(seconds) s") }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
}

func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
}
