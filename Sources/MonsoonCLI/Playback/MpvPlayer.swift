import FoundationEssentials
import MonsoonBasics
import Glibc
import Synchronization
import MonsoonPodcasts

/// mpv as a child process, driven through its JSON IPC protocol over a socket pair
/// (`--input-ipc-client`): mpv quits when Monsoon's end closes, so it never outlives Monsoon,
/// even one killed with SIGKILL. A reader thread turns mpv's events and answers into `current`.
/// mpv runs in its own process group, so Ctrl-C at the terminal reaches Monsoon only, which then
/// asks mpv where it is (`position(within:)`) and to quit. Its log is in a private temporary
/// folder, removed by `stop()`.

final class MpvPlayer: @unchecked Sendable {
    // Unchecked: `state` and `exit` are behind their locks; the socket is written under
    // `writeLock` and only read by the reader thread.

    /// What mpv has reported so far.
    struct State: Sendable {
        /// The last playback position reported (mpv clears it when playback ends: kept here).
        var position: Double?
        var duration: Double?
        var paused = false
        /// Why the file ended (`eof`, `quit`, `error`, …), once it did.
        var endReason: String?
        /// Playback reached the end (of the file, or of `--length` / `--end`): mpv keeps the file
        /// open there, paused (`--keep-open`), so it can still say where it is.
        var eofReached = false
        /// mpv has answered a command: it reads its socket.
        var answering = false
        /// Answers to `position(within:)`, by request id: the position, or nil when mpv had none.
        var positions: [Int: Double?] = [:]
        /// The socket closed: every event mpv sent has been read.
        var readerDone = false
        var loaded: Bool { position != nil }
    }

    /// How mpv ended, once reaped.
    struct Exit: Sendable {
        var code: Int32
        /// Monsoon killed it (it did not quit when asked).
        var killedByMonsoon: Bool
    }

    let pid: pid_t
    private let socket: Int32
    private let folder: String
    private let state = Mutex(State())
    private let exit = Mutex<Exit?>(nil)
    private let killing = Mutex(false)
    private let requests = Mutex(0)
    private let writeLock = Locked()

    /// mpv's output, where it says what went wrong.
    var logPath: String { folder + "/mpv.log" }

    static func locate(path: String?) -> String? {
        for folder in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = String(folder).joiningPath("mpv")
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The descriptor mpv reads its end of the control socket from (`--input-ipc-client`).
    static let controlDescriptor: Int32 = 3

    /// Starts mpv on `target` (a file path or an http(s) URL) at `start` seconds, and waits until it
    /// answers on its socket. Gives up when `cancelled` says so (Ctrl-C) or mpv exits first, with
    /// mpv's own last words.
    ///
    /// The target goes through the socket (`loadfile`), not the command line: a private feed's
    /// enclosure URL carries its token, and any user of the machine can read a process's
    /// arguments in `/proc`. mpv starts idle and quits once that one file fails, or when asked;
    /// at the end of the file it stays, paused (`--keep-open`), until asked where it stopped.
    static func start(executable: String, target: String, start: Double, options: [String], environment: [String: String],
                      cancelled: @Sendable () -> Bool) async throws -> MpvPlayer {
        let folder = try privateFolder(environment: environment)
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            let reason = String(cString: strerror(errno))
            removeFolder(folder)
            throw CLIError(message: "cannot make a socket to control mpv: \(reason)")
        }
        let arguments = [executable, "--input-ipc-client=fd://\(controlDescriptor)", "--input-terminal=no", "--ytdl=no", "--idle=once",
                         "--keep-open=yes", "--force-window=no", "--start=\(String(cFormat: "%.3f", start))"]
            + options
        let pid: pid_t
        do {
            pid = try spawn(arguments, log: folder + "/mpv.log", control: pair[1], environment: environment)
        } catch {
            close(pair[0])
            close(pair[1])
            removeFolder(folder)
            throw error
        }
        close(pair[1])   // mpv's end is mpv's alone: once it exits, reading ours ends
        let player = MpvPlayer(pid: pid, socket: pair[0], folder: folder)
        // mpv answers the first commands once it reads its socket; a bad option ends it first.
        var failure: String?
        while !player.current.answering {
            if let exit = player.ended {
                failure = "mpv exited before it could be controlled (status \(exit.code))"
            } else if cancelled() {
                failure = "stopped before mpv started"
            }
            if failure != nil { break }
            try? await Task.sleep(nanoseconds: 20_000_000)   // cancellation: the loop checks `cancelled`
        }
        if let failure {
            let reason = reason(logAt: player.logPath).map { ": " + $0 } ?? ""
            player.stop()
            throw CLIError(message: failure + reason)
        }
        player.send(["loadfile", .text(target)])
        return player
    }

    private init(pid: pid_t, socket: Int32, folder: String) {
        self.pid = pid
        self.socket = socket
        self.folder = folder
        Self.running.withLock { $0 = pid }
        for (id, property) in ["time-pos", "duration", "pause", "eof-reached"].enumerated() { send(["observe_property", .integer(id + 1), .text(property)]) }
        NamedThread.detach(named: "monsoon.mpv") { [self] in readEvents() }
    }

    deinit { close(socket) }

    var current: State { state.withLock { $0 } }

    /// How mpv ended; nil while it runs (reaps it once it has exited).
    var ended: Exit? {
        exit.withLock { exit in
            if exit == nil {
                var raw: Int32 = 0
                if waitpid(pid, &raw, WNOHANG) == pid {
                    exit = Exit(code: Self.exitCode(raw), killedByMonsoon: killing.withLock { $0 })
                    Self.running.withLock { $0 = nil }
                }
            }
            return exit
        }
    }

    func seek(by seconds: Double) { send(["seek", .number(seconds), "relative"]) }
    func togglePause() { send(["cycle", "pause"]) }
    func quit() { send(["quit"]) }

    /// Asks mpv where playback is now (`time-pos`) and waits for the answer, up to `seconds`.
    ///
    /// What mpv last *reported* lags behind: it reports a position now and then, and not the one
    /// it stops at (at the end of `--length` it was half a second short). Nil when mpv cannot
    /// answer (it is gone, or has no file loaded); the caller then keeps the last one reported.
    func position(within seconds: Double) async -> Double? {
        let id = requests.withLock { count -> Int in
            count += 1
            return count
        }
        send(["get_property", "time-pos"], requestID: id)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let state = current
            if let answer = state.positions[id] { return answer }
            if state.readerDone { return nil }
            try? await Task.sleep(nanoseconds: 5_000_000)   // cancellation: the deadline ends the wait
        }
        return nil
    }

    /// A `waitpid` status as a shell shows it: the exit code, or 128 + the signal that killed it.
    private static func exitCode(_ status: Int32) -> Int32 {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Kills mpv (it did not quit when asked, or Monsoon is leaving).
    func forceStop() {
        killing.withLock { $0 = true }
        if ended == nil { kill(pid, SIGKILL) }
    }

    /// Makes sure mpv is gone and reaped, and removes its log.

    func stop() {
        if ended == nil {
            forceStop()
            exit.withLock { exit in
                var raw: Int32 = 0
                if exit == nil, waitpid(pid, &raw, 0) == pid {
                    exit = Exit(code: Self.exitCode(raw), killedByMonsoon: true)
                }
            }
            Self.running.withLock { $0 = nil }
        }
        Self.removeFolder(folder)
    }

    /// Writes one command (with `requestID`, its answer carries it); a closed socket (mpv gone) is
    /// ignored, as the exit is noticed anyway.
    func send(_ command: [MpvMessage.Argument], requestID: Int? = nil) {
        // Only strings and numbers: they always encode.
        guard let data = try? JSONEncoder().encode(MpvMessage.Command(command: command, request_id: requestID)) else { return }
        let line = data + Data([0x0A])
        writeLock.withLock {
            line.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = Glibc.send(socket, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { return }
                    offset += written
                }
            }
        }
    }

    private func readEvents() {
        defer { state.withLock { $0.readerDone = true } }
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            pending.append(contentsOf: buffer[..<count])
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = pending[pending.startIndex..<newline]
                pending = Data(pending[(newline + 1)...])
                // A line that is not a JSON object is not an event: nothing to learn from it.
                guard let incoming = try? JSONDecoder().decode(MpvMessage.Incoming.self, from: line) else { continue }
                handle(incoming)
            }
        }
    }

    private func handle(_ event: MpvMessage.Incoming) {
        if event.event == nil, let error = event.error {
            // An answer to a command: mpv reads its socket. Ours to `position(within:)` carry an id.
            let id = event.request_id ?? 0
            state.withLock { state in
                state.answering = true
                if id > 0 { state.positions[id] = error == "success" ? event.data?.number : nil }
            }
            return
        }
        switch event.event {
        case "property-change":
            let value = event.data
            state.withLock { state in
                switch event.name {
                case "time-pos": if let seconds = value?.number { state.position = seconds }
                case "duration": if let seconds = value?.number { state.duration = seconds }
                case "pause": if let paused = value?.flag { state.paused = paused }
                case "eof-reached": state.eofReached = value?.flag ?? false
                default: break
                }
            }
        case "end-file":
            state.withLock { $0.endReason = event.reason ?? "unknown" }
        default:
            break
        }
    }

    /// What mpv's output says went wrong: its last line but the closing "Exiting... (…)", with
    /// any credentials in URLs masked.
    static func reason(logAt path: String) -> String? {
        let log = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""   // no log: nothing to add
        return log.split(separator: "\n").map { $0.trimmingBlanks() }
            .last { !$0.isEmpty && !$0.hasPrefix("Exiting...") }.map(Redaction.redactText)
    }

    /// The mpv running now, killed if Monsoon exits without stopping it (a second Ctrl-C).
    private static let running: Mutex<pid_t?> = {
        atexit { MpvPlayer.running.withLock { pid in if let pid { kill(pid, SIGKILL) } } }
        return Mutex(nil)
    }()

    /// A folder only this user can enter, for mpv's log: in the runtime folder when its path is
    /// short enough, else in /tmp.
    private static func privateFolder(environment: [String: String]) throws -> String {
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") && $0.utf8.count < 60 ? $0 : nil } ?? "/tmp"
        var template = Array((runtime + "/monsoon-mpv-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CLIError(message: "cannot make a private folder in \(runtime) for mpv's control socket: \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    private static func removeFolder(_ folder: String) {
        unlink(folder + "/mpv.log")
        rmdir(folder)
    }

    /// Spawns mpv with `control` (close-on-exec here) as its `controlDescriptor`.
    private static func spawn(_ arguments: [String], log: String, control: Int32, environment: [String: String]) throws -> pid_t {
        let attributes: SpawnAttributes
        do { attributes = try SpawnAttributes(.processGroup) } catch {
            throw CLIError(message: "cannot start mpv (\(arguments[0])): \(error.reason)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy, but does nothing when both numbers are the same:
        // `control` goes through a number of its own first (and before 0–2 are opened over, in
        // case it is one of them).
        let parked: Int32 = 10
        posix_spawn_file_actions_adddup2(&actions, control, parked)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // mpv says what went wrong on standard output as often as on standard error: both go to the log.
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, parked, controlDescriptor)
        posix_spawn_file_actions_addclose(&actions, parked)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, attributes.raw, argv, envp)
        guard result == 0 else { throw CLIError(message: "cannot start mpv (\(arguments[0])): \(String(cString: strerror(result)))") }
        return pid
    }
}
