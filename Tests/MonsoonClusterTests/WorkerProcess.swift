import Foundation

/// A `monsoon worker` process, started with `posix_spawn` (an empty signal mask, only its standard
/// streams open, its output in a file), to be killed and started again by the cluster's tests.
final class WorkerProcess: @unchecked Sendable {
    // Only touched from the test's task.
    let name: String
    let log: String
    private(set) var pid: pid_t = 0
    private var exitStatus: Int32?
    private let arguments: [String]
    /// Variables set on top of this process's environment.
    private let environment: [String: String]

    /// The built `monsoon` binary, next to the test bundle.
    static let binary: String = {
        let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
        for candidate in [bundle.appendingPathComponent("monsoon").path,
                          URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("monsoon").path] {
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return bundle.appendingPathComponent("monsoon").path
    }()

    init(name: String, arguments: [String], log: String, environment: [String: String] = [:]) {
        self.name = name
        self.arguments = arguments
        self.log = log
        self.environment = environment
    }

    /// Starts the process (again), its output appended to `log`.
    func start() throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGSTOP, SIGCONT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {   // no /proc: nothing to close
            if let fd = Int32(name), fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        let argv = ([Self.binary] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, Self.binary, &actions, &attributes, argv, envp)
        guard result == 0 else { throw PostgresTestError("cannot start \(Self.binary): \(String(cString: strerror(result)))") }
        pid = child
        exitStatus = nil
    }

    var isRunning: Bool {
        guard pid > 0, exitStatus == nil else { return false }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid {
            exitStatus = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        }
        return exitStatus == nil
    }

    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Kills it with SIGKILL and reaps it.
    func kill9() {
        guard isRunning else { return }
        kill(pid, SIGKILL)
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        exitStatus = 137
    }

    /// Asks it to stop (SIGTERM) and waits for its exit status (130 for a worker: interrupted).
    func stop(seconds: Double = 60) async throws -> Int32 {
        signal(SIGTERM)
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            guard Date() < deadline else {
                kill9()
                throw PostgresTestError("worker \(name) did not stop within \(Int(seconds)) s:\n\(output)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return exitStatus ?? -1
    }

    /// Waits for it to end by itself, and its exit status.
    func wait(seconds: Double = 60) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            guard Date() < deadline else {
                kill9()
                throw PostgresTestError("\(name) did not end within \(Int(seconds)) s:\n\(output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return exitStatus ?? -1
    }

    var output: String {
        String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self)
    }
}
