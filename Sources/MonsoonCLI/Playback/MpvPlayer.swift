import Foundation
import Synchronization
import MonsoonEngine
import MonsoonPodcasts

/// mpv as a child process, driven through its JSON IPC socket (`--input-ipc-server`).
///
/// A reader thread turns mpv's event lines into `current`; commands are written to the socket
/// as JSON lines. mpv runs in its own process group, so Ctrl-C at the terminal reaches Monsoon
/// only, which then asks mpv to quit and keeps the last position mpv reported. The socket and
/// mpv's log live in a private temporary folder, removed by `stop()`.
final class MpvPlayer: @unchecked Sendable {
    // Unchecked: `state` and `exit` are behind their locks; the socket is written under
    // `writeLock` and only read by the reader thread.

    /// What mpv has reported so far.
    struct State: Sendable {
        /// The last playback position reported (mpv clears it when playback ends: kept here).
        var position: Double?
        /// The duration mpv found in the file or stream.
        var duration: Double?
        var paused = false
        /// Why the file ended (`eof`, `quit`, `error`, …), once it did.
        var endReason: String?
        /// The socket closed: every event mpv sent has been read.
        var readerDone = false
        var loaded: Bool { position != nil }
    }

    /// How mpv ended, once reaped.
    struct Exit: Sendable {
        /// Its exit code, or 128 + the signal that killed it.
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
    private let writeLock = NSLock()

    /// mpv's output, where it says what went wrong.
    var logPath: String { folder + "/mpv.log" }

    /// The `mpv` on `PATH`, or nil.
    static func locate(path: String?) -> String? {
        for folder in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = (String(folder) as NSString).appendingPathComponent("mpv")
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Starts mpv on `target` (a file path or an http(s) URL) at `start` seconds, and connects to
    /// its socket. Gives up when `cancelled` says so (Ctrl-C) or mpv exits first, with mpv's own
    /// last words.
    ///
    /// The target goes through the socket (`loadfile`), not the command line: a private feed's
    /// enclosure URL carries its token, and any user of the machine can read a process's
    /// arguments in `/proc`. mpv starts idle and quits once that one file ends or fails.
    static func start(executable: String, target: String, start: Double, options: [String], environment: [String: String],
                      cancelled: @Sendable () -> Bool) async throws -> MpvPlayer {
        let folder = try privateFolder(environment: environment)
        let socketPath = folder + "/mpv.sock"
        let arguments = [executable, "--input-ipc-server=\(socketPath)", "--input-terminal=no", "--ytdl=no", "--idle=once",
                         "--keep-open=no", "--force-window=no", "--start=\(String(format: "%.3f", start))"]
            + options
        let pid: pid_t
        do { pid = try spawn(arguments, log: folder + "/mpv.log", environment: environment) } catch {
            removeFolder(folder)
            throw error
        }
        var socket: Int32 = -1
        var failure: String?
        var reaped = false
        while socket < 0 && failure == nil {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                reaped = true
                failure = "mpv exited before it could be controlled (status \(exitCode(status)))"
                break
            }
            socket = connect(socketPath)
            if socket >= 0 { break }
            if cancelled() { failure = "stopped before mpv started" } else { try? await Task.sleep(nanoseconds: 20_000_000) }   // cancellation: the loop checks `cancelled`
        }
        if let failure {
            if !reaped {   // a reaped pid may already be another process's
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
            }
            let reason = reason(logAt: folder + "/mpv.log").map { ": " + $0 } ?? ""
            removeFolder(folder)
            throw CLIError(message: failure + reason)
        }
        let player = MpvPlayer(pid: pid, socket: socket, folder: folder)
        player.send(["loadfile", target])
        return player
    }

    private init(pid: pid_t, socket: Int32, folder: String) {
        self.pid = pid
        self.socket = socket
        self.folder = folder
        Self.running.withLock { $0 = pid }
        for (id, property) in ["time-pos", "duration", "pause"].enumerated() { send(["observe_property", id + 1, property]) }
        Thread { [self] in readEvents() }.start()
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

    func seek(by seconds: Double) { send(["seek", seconds, "relative"]) }
    func togglePause() { send(["cycle", "pause"]) }
    func quit() { send(["quit"]) }

    /// A `waitpid` status as a shell shows it: the exit code, or 128 + the signal that killed it.
    private static func exitCode(_ status: Int32) -> Int32 {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Kills mpv (it did not quit when asked, or Monsoon is leaving).
    func forceStop() {
        killing.withLock { $0 = true }
        if ended == nil { kill(pid, SIGKILL) }
    }

    /// Makes sure mpv is gone and reaped, and removes the socket and the log.
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

    /// Writes one command; a closed socket (mpv gone) is ignored, as the exit is noticed anyway.
    func send(_ command: [Any]) {
        // Only strings and numbers: they always serialize.
        guard let data = try? JSONSerialization.data(withJSONObject: ["command": command]) else { return }
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

    /// Reads mpv's JSON lines until the socket closes.
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
                guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }
                handle(object)
            }
        }
    }

    private func handle(_ event: [String: Any]) {
        switch event["event"] as? String {
        case "property-change":
            let value = event["data"]
            state.withLock { state in
                switch event["name"] as? String {
                case "time-pos": if let seconds = value as? Double { state.position = seconds }
                case "duration": if let seconds = value as? Double { state.duration = seconds }
                case "pause": if let paused = value as? Bool { state.paused = paused }
                default: break
                }
            }
        case "end-file":
            state.withLock { $0.endReason = event["reason"] as? String ?? "unknown" }
        default:
            break
        }
    }

    /// What mpv's output says went wrong: its last line but the closing "Exiting... (…)", with
    /// any credentials in URLs masked.
    static func reason(logAt path: String) -> String? {
        let log = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""   // no log: nothing to add
        return log.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .last { !$0.isEmpty && !$0.hasPrefix("Exiting...") }.map(Redaction.redactText)
    }

    // MARK: - Process and socket

    /// The mpv running now, killed if Monsoon exits without stopping it (a second Ctrl-C).
    private static let running: Mutex<pid_t?> = {
        atexit { MpvPlayer.running.withLock { pid in if let pid { kill(pid, SIGKILL) } } }
        return Mutex(nil)
    }()

    /// A folder only this user can enter, for the socket (whose path must stay under 108 bytes)
    /// and the log: in the runtime folder when its path is short enough, else in /tmp.
    private static func privateFolder(environment: [String: String]) throws -> String {
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") && $0.utf8.count < 60 ? $0 : nil } ?? "/tmp"
        var template = Array((runtime + "/monsoon-mpv-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CLIError(message: "cannot make a private folder in \(runtime) for mpv's control socket: \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    private static func removeFolder(_ folder: String) {
        for name in ["mpv.sock", "mpv.log"] { unlink(folder + "/" + name) }
        rmdir(folder)
    }

    private static func spawn(_ arguments: [String], log: String, environment: [String: String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM, SIGPIPE, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // mpv says what went wrong on standard output as often as on standard error: both go to the log.
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else { throw CLIError(message: "cannot start mpv (\(arguments[0])): \(String(cString: strerror(result)))") }
        return pid
    }

    /// A connected socket, or -1 while mpv has not made it yet.
    private static func connect(_ path: String) -> Int32 {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        if connected { return fd }
        close(fd)
        return -1
    }
}
