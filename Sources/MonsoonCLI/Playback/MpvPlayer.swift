import Foundation
import MonsoonEngine

/// mpv as a child process, driven through its JSON IPC socket (`--input-ipc-server`).
///
/// A reader thread turns mpv's event lines into `state`; commands are written to the socket
/// as JSON lines. mpv runs in its own process group, so Ctrl-C at the terminal reaches Monsoon
/// only, which then asks mpv to quit and keeps the last position mpv reported.
final class MpvPlayer: @unchecked Sendable {
    // Unchecked: `state` is behind its lock, the socket is written under `writeLock`, and the
    // reader thread only reads the socket.

    /// What mpv has reported so far.
    struct State: Sendable {
        /// The last playback position reported (it is cleared when playback ends: kept here).
        var position: Double?
        var duration: Double?
        var paused = false
        var loaded = false
        /// Why the file ended (`eof`, `quit`, `error`, …), once it did.
        var endReason: String?
    }

    let pid: pid_t
    private let socket: Int32
    private let state = Locked(State())
    private let writeLock = NSLock()
    private var status: Int32?
    let logPath: String

    /// The `mpv` on `PATH`, or nil.
    static func locate(path: String?) -> String? {
        for folder in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = (String(folder) as NSString).appendingPathComponent("mpv")
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Starts mpv on `target` (a file path or an http(s) URL, given after `--` so it is never read
    /// as an option) at `start` seconds, and connects to its socket.
    init(executable: String, target: String, start: Double, options: [String], environment: [String: String]) throws {
        let socketPath = Self.socketPath(environment: environment)
        logPath = socketPath + ".log"
        unlink(socketPath)
        let arguments = [executable, "--input-ipc-server=\(socketPath)", "--input-terminal=no", "--ytdl=no", "--idle=no",
                         "--keep-open=no", "--force-window=no", "--start=\(String(format: "%.3f", start))"]
            + options + ["--", target]
        pid = try Self.spawn(arguments, log: logPath, environment: environment)
        do {
            socket = try Self.connect(socketPath, pid: pid)
        } catch {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            let message = (error as? CLIError)?.message ?? "\(error)"
            let reason = Self.reason(logAt: logPath).map { ": " + $0 } ?? ""
            unlink(logPath)
            throw CLIError(message: message + reason)
        }
        unlink(socketPath)   // connected: the path is no longer needed
        for (id, property) in ["time-pos", "duration", "pause"].enumerated() { send(["observe_property", id + 1, property]) }
        let reader = Thread { [self] in readEvents() }
        reader.start()
    }

    deinit {
        close(socket)
        unlink(logPath)
    }

    var current: State { state.withLock { $0 } }

    /// Whether mpv still runs (reaps it once it has exited).
    var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid { status = raw }
        return status == nil
    }

    /// How mpv ended: its exit code, or 128 + the signal that killed it.
    var exitCode: Int32? { status.map { ($0 & 0x7f) == 0 ? ($0 >> 8) & 0xff : 128 + ($0 & 0x7f) } }

    func seek(by seconds: Double) { send(["seek", seconds, "relative"]) }
    func togglePause() { send(["cycle", "pause"]) }
    func quit() { send(["quit"]) }

    /// Writes one command; a closed socket (mpv gone) is ignored, as the exit is noticed anyway.
    func send(_ command: [Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: ["command": command]) else { return }   // only ever our own literals
        writeLock.withLock {
            let line = data + Data([0x0A])
            line.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = Glibc.send(socket, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                    if written <= 0 { if errno == EINTR { continue } else { return } }
                    offset += written
                }
            }
        }
    }

    /// Reads mpv's JSON lines until the socket closes.
    private func readEvents() {
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
                guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }   // not an event: skip
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
                case "time-pos":
                    if let seconds = value as? Double {
                        state.position = seconds
                        state.loaded = true
                    }
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

    /// What mpv's output says went wrong: its last line but the closing "Exiting... (…)".
    static func reason(logAt path: String) -> String? {
        let log = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""   // no log: nothing to add
        return log.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .last { !$0.isEmpty && !$0.hasPrefix("Exiting...") }
    }

    /// A socket path under 108 bytes (the limit of `sun_path`): in the runtime folder when it is
    /// short enough, else in /tmp.
    private static func socketPath(environment: [String: String]) -> String {
        let name = "monsoon-mpv-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"), runtime.utf8.count + name.utf8.count + 1 < 100 {
            return (runtime as NSString).appendingPathComponent(name)
        }
        return "/tmp/" + name
    }

    private static func spawn(_ arguments: [String], log: String, environment: [String: String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // mpv says what went wrong on standard output as often as on standard error: both go to the log.
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else { throw CLIError(message: "cannot start mpv (\(arguments[0])): \(String(cString: strerror(result)))") }
        return pid
    }

    /// Connects to mpv's socket once it exists (mpv makes it as it starts).
    private static func connect(_ path: String, pid: pid_t) throws -> Int32 {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw CLIError(message: "mpv exited before it could be controlled (status \((status >> 8) & 0xff))")
            }
            let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw CLIError(message: "cannot make a socket to control mpv: \(String(cString: strerror(errno)))") }
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
            usleep(20_000)
        }
        throw CLIError(message: "mpv did not open its control socket within 10 seconds")
    }
}
