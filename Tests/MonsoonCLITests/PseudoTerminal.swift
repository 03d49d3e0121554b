import Foundation
@testable import MonsoonCLI

/// The built `monsoon` on a pseudo-terminal of our own (openpty): its controlling terminal, so a
/// Ctrl-C typed into it is echoed as `^C` and interrupts it, and a resize (TIOCSWINSZ) sends it
/// SIGWINCH, as a terminal window does. What it draws is read from the master side and played on
/// a `VirtualScreen`.
final class PseudoTerminal: @unchecked Sendable {
    // Only touched from the test's task.
    private let master: Int32
    let processIdentifier: pid_t
    private var status: Int32?
    let screen: VirtualScreen
    /// Everything read so far, as it came.
    private(set) var raw = ""
    private var pending: [UInt8] = []

    init(_ arguments: [String], in directory: String, home: String, columns: Int, rows: Int = 40) throws {
        guard FileManager.default.isExecutableFile(atPath: monsoonBinary) else {
            throw CLITestError("the monsoon binary is missing at \(monsoonBinary): build it with `swift build` (make test does)")
        }
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, &size) == 0 else { throw CLITestError("openpty failed: \(String(cString: strerror(errno)))") }
        defer { close(slave) }
        self.master = master
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        let slavePath = String(cString: ttyname(slave))
        screen = VirtualScreen(columns: columns, rows: rows)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGWINCH, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // A session of its own, whose controlling terminal is the slave it opens first.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | 0x80 /* POSIX_SPAWN_SETSID */))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {   // no /proc: nothing to close
            if let fd = Int32(name), fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else { throw CLITestError("posix_spawn cannot change folders here") }
        _ = directory.withCString { unsafeBitCast(symbol, to: AddChdir.self)(&actions, $0) }
        var environment = ProcessInfo.processInfo.environment
        environment["MONSOON_HOME"] = home
        environment["TERM"] = "xterm"
        environment["NO_COLOR"] = "1"
        let argv = ([monsoonBinary] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, monsoonBinary, &actions, &attributes, argv, envp)
        guard result == 0 else { throw CLITestError("cannot start monsoon: \(String(cString: strerror(result)))") }
        processIdentifier = pid
    }

    deinit {
        if status == nil {
            kill(processIdentifier, SIGKILL)
            var raw: Int32 = 0
            waitpid(processIdentifier, &raw, 0)
        }
        close(master)
    }

    /// Reads what has come and plays it on the screen.
    func pump() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(master, &buffer, buffer.count)
            guard count > 0 else { break }
            pending += buffer[0..<count]
        }
        // Whole UTF-8 sequences only: a character may be split between two reads.
        var end = pending.count
        while end > 0 && pending.count - end < 4 && (pending[end - 1] & 0xC0) == 0x80 { end -= 1 }
        if end > 0 && pending[end - 1] >= 0xC0 { end -= 1 }
        guard end > 0 else { return }
        let text = String(decoding: pending[0..<end], as: UTF8.self)
        pending.removeFirst(end)
        raw += text
        screen.play(text)
    }

    /// Waits (reading as it goes) until `condition` holds, within a generous deadline.
    func wait(seconds: Double = 60, _ what: String, until condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            pump()
            if condition() { return }
            if Date() > deadline { throw CLITestError("gave up waiting for \(what); the screen:\n\(screen.visible.joined(separator: "\n"))") }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    /// Resizes the terminal with the program stopped, so every byte drawn at the old width is on
    /// the screen before it is rewrapped (as a terminal that rewraps does); the kernel sends
    /// SIGWINCH, seen once the program goes on.
    func resize(columns: Int, rows: Int = 40) async throws {
        kill(processIdentifier, SIGSTOP)
        try await Task.sleep(nanoseconds: 100_000_000)
        pump()
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        screen.resize(columns: columns)
        kill(processIdentifier, SIGCONT)
    }

    /// Types `text` (`"\u{03}"` is Ctrl-C).
    func type(_ text: String) {
        var bytes = Array(text.utf8)
        _ = write(master, &bytes, bytes.count)
    }

    /// The exit status once it has ended (reading what is left), within a deadline.
    func finish(seconds: Double = 60) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while status == nil {
            pump()
            var raw: Int32 = 0
            if waitpid(processIdentifier, &raw, WNOHANG) == processIdentifier {
                status = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            } else if Date() > deadline {
                throw CLITestError("monsoon did not exit within \(seconds) s")
            } else {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        pump()
        return status ?? -1
    }
}
