import Foundation

/// One run of `--exec`'s program, started with `posix_spawn` (no shell): standard input from
/// `/dev/null`, standard output and error into a pipe this process reads (and passes on, line by
/// line, to the user's standard error: never into `--json`'s standard output), an empty signal
/// mask and default signal actions, no descriptor but those three, in the command's folder and in
/// a process group of its own, so `terminate` reaches what it started too (a shell's children).
///
/// Foundation's `Process` is not used: it passes on the spawning thread's signal mask and, on
/// older runtimes, every descriptor without close-on-exec.
struct HookProcess {
    /// How the program ended.
    enum Outcome: Sendable, Equatable {
        case exited(Int32)
        case killed(Int32)

        var succeeded: Bool { self == .exited(0) }

        /// `exit status 1`, `killed by signal 9 (SIGKILL)`.
        var description: String {
            switch self {
            case .exited(let code): return "exit status \(code)"
            case .killed(let signal):
                let names: [Int32: String] = [SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGABRT: "SIGABRT", SIGKILL: "SIGKILL",
                                              SIGSEGV: "SIGSEGV", SIGPIPE: "SIGPIPE", SIGTERM: "SIGTERM", SIGBUS: "SIGBUS"]
                return "killed by signal \(signal)" + (names[signal].map { " (\($0))" } ?? "")
            }
        }
    }

    let pid: pid_t
    /// The read end of the program's output pipe.
    private let output: Int32

    /// Starts `program` with `arguments` (the first is the program's own name) and `environment`.
    /// - Throws: `HookError` (`.cannotStart`) with the system's reason.
    init(program: String, arguments: [String], environment: [String: String], directory: String) throws(HookError) {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw HookError(.cannotStart, "cannot start the hook \(program): \(String(cString: strerror(errno)))") }
        // Close-on-exec (pipe2 is not imported): no other child keeps this pipe open, so its end comes with this hook's.
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(pipeEnds[1]) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGQUIT, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
        Self.closeOthers(&actions)
        Self.changeDirectory(&actions, to: directory)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        guard result == 0 else {
            close(pipeEnds[0])
            throw HookError(.cannotStart, "cannot start the hook \(program): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        output = pipeEnds[0]
        // Read without blocking: a program that leaves a child behind holding the pipe must not hold the run.
        _ = fcntl(output, F_SETFL, fcntl(output, F_GETFL) | O_NONBLOCK)
    }

    /// Asks the program, and every process of its group, to end (SIGTERM).
    static func terminate(_ pid: pid_t) {
        kill(-pid, SIGTERM)
    }

    /// Passes the program's output on, one line at a time (the last one too, without its newline),
    /// until the program has ended and its output is read (what a child it left behind writes
    /// later is not waited for). Blocks: call it on a thread of its own.
    func wait(passingLinesTo emit: (String) -> Void) -> Outcome {
        let block = 1 << 16
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: block, alignment: 1)
        defer { buffer.deallocate() }
        var pending = Data()
        var outcome: Outcome?
        var open = true
        while open {
            // Everything there is to read now.
            while true {
                let count = read(output, buffer, block)
                if count < 0 && errno == EINTR { continue }
                if count == 0 { open = false }   // the end: every writer has closed it
                if count <= 0 { break }   // nothing more now (EAGAIN), or an error on a pipe of our own: as the end
                pending.append(buffer.assumingMemoryBound(to: UInt8.self), count: count)
                while let newline = pending.firstIndex(of: 0x0A) {
                    emit(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
                // A line without end is passed on in pieces, so memory stays bounded.
                if pending.count > block {
                    emit(String(decoding: pending, as: UTF8.self))
                    pending.removeAll(keepingCapacity: true)
                }
            }
            // Its end, once it came and what it wrote before is read.
            if let outcome { return finish(outcome, pending: pending, emit: emit) }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid {
                outcome = (raw & 0x7f) == 0 ? .exited((raw >> 8) & 0xff) : .killed(raw & 0x7f)
                continue   // one more read: what it wrote just before it ended
            }
            if result < 0 && errno != EINTR { outcome = .killed(0); continue }   // only a pid not ours fails it: never the case
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 100)   // a wake-up a tenth of a second at most, to look at the program's end
        }
        if let outcome { return finish(outcome, pending: pending, emit: emit) }
        // The pipe ended first: the program's end is near, waiting for it is short.
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 {
            if errno != EINTR { return finish(.killed(0), pending: pending, emit: emit) }   // only a pid not ours fails it
        }
        return finish((raw & 0x7f) == 0 ? .exited((raw >> 8) & 0xff) : .killed(raw & 0x7f), pending: pending, emit: emit)
    }

    private func finish(_ outcome: Outcome, pending: Data, emit: (String) -> Void) -> Outcome {
        close(output)
        if !pending.isEmpty { emit(String(decoding: pending, as: UTF8.self)) }
        return outcome
    }

    /// Every descriptor past the standard three is closed in the child (most are close-on-exec
    /// already; this also covers those a library opened without it).
    private static func closeOthers(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {   // glibc 2.34
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }
    }

    /// The child starts in `directory` (the command's folder, which an in-process run need not share).
    private static func changeDirectory(_ actions: inout posix_spawn_file_actions_t, to directory: String) {
        typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else { return }   // glibc 2.29; else the process's own folder
        _ = directory.withCString { unsafeBitCast(symbol, to: AddChdir.self)(&actions, $0) }
    }
}
