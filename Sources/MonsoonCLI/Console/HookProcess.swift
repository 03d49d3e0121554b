import CLibc
import FoundationEssentials
import Glibc
import MonsoonPodcasts
import Synchronization

/// One run of `--exec`'s program, started with `posix_spawn` (no shell): standard input from
/// `/dev/null`, standard output and error into a pipe passed on line by line to the user's
/// standard error (never into `--json`'s standard output), no other descriptor, in the command's
/// folder and in a session of its own (`SpawnAttributes`): with no controlling terminal, a
/// program that would read one fails instead of stopping, and `terminate` reaches its children.
/// Not Foundation's `Process`: it passes on the spawning thread's signal mask and, on older
/// runtimes, every descriptor without close-on-exec.

struct HookProcess {
    let pid: pid_t
    /// The read end of the program's output pipe.
    private let output: Int32

    /// Starts `program` with `arguments` (the first is the program's own name) and `environment`.
    /// - Throws: `HookError` (`.cannotStart`) with the system's reason.
    init(program: String, arguments: [String], environment: [String: String], directory: String) throws(HookError) {
        func failure(_ code: Int32) -> HookError { HookError(.cannotStart, "cannot start the hook \(program): \(String(cString: strerror(code)))") }
        // Close-on-exec from the start: no other child, spawned meanwhile by another thread, keeps this pipe open.
        guard let pipeEnds = Self.pipe() else { throw failure(errno) }
        defer { close(pipeEnds.write) }
        let attributes: SpawnAttributes
        do { attributes = try SpawnAttributes(.session) } catch { throw failure(error.code) }
        var actions = posix_spawn_file_actions_t()
        guard posix_spawn_file_actions_init(&actions) == 0 else { throw failure(ENOMEM) }
        defer { posix_spawn_file_actions_destroy(&actions) }
        var steps = [posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)]
        // dup2 onto its own number does nothing, so close-on-exec would stay and close it: not possible
        // here (0 is taken, and a pipe's ends are the lowest free numbers), but guarded as mpv's is.
        if pipeEnds.write != 1 { steps.append(posix_spawn_file_actions_adddup2(&actions, pipeEnds.write, 1)) }
        steps.append(posix_spawn_file_actions_adddup2(&actions, pipeEnds.write == 1 ? 1 : pipeEnds.write, 2))
        if let failed = steps.first(where: { $0 != 0 }) {
            close(pipeEnds.read)
            throw failure(failed)
        }
        do throws(SpawnFailure) {
            try Self.closeOthers(&actions)
            try Self.changeDirectory(&actions, to: directory)
        } catch {
            close(pipeEnds.read)
            throw failure(error.code)
        }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program, &actions, attributes.raw, argv, envp)
        guard result == 0 else {
            close(pipeEnds.read)
            throw failure(result)
        }
        self.pid = pid
        output = pipeEnds.read
        // Read without blocking: a program that leaves a child behind holding the pipe must not hold
        // the run. Should it fail (it does not on a pipe of our own), reads block: the loop still ends.
        let flags = fcntl(output, F_GETFL)
        if flags < 0 || fcntl(output, F_SETFL, flags | O_NONBLOCK) != 0 {
            let code = errno
            kill(-pid, SIGKILL)   // it has not run a moment yet: nothing of it to keep
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            close(output)
            errno = code
            throw failure(errno)
        }
    }

    /// A pipe, both ends close-on-exec atomically (`pipe2`); nil with `errno` set when there is none.
    private static func pipe() -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [-1, -1]
        guard monsoon_pipe_cloexec(&ends) == 0 else { return nil }
        return (ends[0], ends[1])
    }

    /// The hooks asked to end (`terminate`), with when their grace ends: `wait` sends SIGKILL then.
    private static let terminations = Mutex<[pid_t: ContinuousClock.Instant]>([:])

    /// Asks the program, and every process of its group, to end: SIGTERM, then SIGCONT (a stopped
    /// process acts on SIGTERM only once it runs); `wait` sends SIGKILL after `grace` (``Timings/hookGrace``)
    /// if it has not ended.
    static func terminate(_ pid: pid_t, grace: Duration) {
        terminations.withLock { if $0[pid] == nil { $0[pid] = .now + grace } }
        // Each fails only when the group is gone already: then there is nothing to stop.
        kill(-pid, SIGTERM)
        kill(-pid, SIGCONT)
    }

    /// Passes the program's output on, one line at a time (the last one too, without its newline),
    /// until the program has ended and what it wrote before is read: at most `finalRead` bytes
    /// after its end, since a child it left behind holding the pipe may write for ever. Blocks:
    /// call it on a thread of its own.
    func wait(passingLinesTo emit: @escaping (String) -> Void) -> HookLedger.Outcome {
        var reader = LineReader(descriptor: output, emit: emit)
        defer {
            reader.finish()
            close(output)
            _ = Self.terminations.withLock { $0.removeValue(forKey: pid) }
        }
        var killed = false
        while true {
            // What there is to read now, a bounded amount (a fast writer never leaves the pipe empty).
            if reader.open { reader.read(upTo: Self.finalRead) }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid {
                reader.read(upTo: Self.finalRead)   // what it wrote just before it ended
                return HookLedger.Outcome(status: raw)
            }
            if result < 0 && errno != EINTR { return .lost }   // ECHILD: its status was collected elsewhere
            // Not reaped yet, so its group's number is still its own: SIGKILL reaches only its processes.
            if !killed, let due = Self.terminations.withLock({ $0[pid] }), ContinuousClock.now > due {
                kill(-pid, SIGKILL)
                killed = true
            }
            // A wake-up a tenth of a second at most, to look at the program's end.
            var poller = pollfd(fd: reader.open ? output : -1, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 100)   // its answer is only a wake-up: the loop reads and looks again either way
        }
    }

    /// How much is read in one go, and after the program's end.
    static let finalRead = 1 << 18

    /// The pipe's bytes, cut into lines.
    private struct LineReader: ~Copyable {
        let descriptor: Int32
        let emit: (String) -> Void
        var open = true
        private var pending = Data()
        private let block = 1 << 16
        private let buffer: UnsafeMutableRawPointer

        init(descriptor: Int32, emit: @escaping (String) -> Void) {
            self.descriptor = descriptor
            self.emit = emit
            buffer = UnsafeMutableRawPointer.allocate(byteCount: block, alignment: 1)
        }

        deinit { buffer.deallocate() }

        /// Reads until nothing more is there now (EAGAIN), the end, or `limit` bytes.
        mutating func read(upTo limit: Int) {
            var total = 0
            while open && total < limit {
                let count = Glibc.read(descriptor, buffer, block)
                if count < 0 && errno == EINTR { continue }
                if count == 0 { open = false }   // the end: every writer has closed it
                if count <= 0 { return }   // nothing more now (EAGAIN), or an error on a pipe of our own: as the end for now
                total += count
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
        }

        /// The last line, without its newline.
        mutating func finish() {
            if !pending.isEmpty { emit(String(decoding: pending, as: UTF8.self)) }
            pending.removeAll()
        }
    }

    /// Every descriptor past the standard three is closed in the child (most are close-on-exec
    /// already; this also covers those a library opened without it).
    private static func closeOthers(_ actions: inout posix_spawn_file_actions_t) throws(SpawnFailure) {
        let result = monsoon_spawn_close_from(&actions, 3)
        if result != 0 { throw SpawnFailure(code: result) }
    }

    /// The child starts in `directory` (the command's folder, which an in-process run need not share).
    private static func changeDirectory(_ actions: inout posix_spawn_file_actions_t, to directory: String) throws(SpawnFailure) {
        let result = directory.withCString { monsoon_spawn_chdir(&actions, $0) }
        if result != 0 { throw SpawnFailure(code: result) }
    }
}
