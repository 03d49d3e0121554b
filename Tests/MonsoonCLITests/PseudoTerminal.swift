import Foundation
@testable import MonsoonCLI

/// The built `monsoon` on a pseudo-terminal of our own (openpty): its controlling terminal, so a
/// Ctrl-C typed into it is echoed as `^C` and interrupts it, and a resize (TIOCSWINSZ) sends it
/// SIGWINCH, as a terminal window does. What it draws is read from the master side and played on
/// a `VirtualScreen`.
final class PseudoTerminal: @unchecked Sendable {
    // Only touched from the test's task.
    private let master: Int32
    private let process: SpawnedProcess
    private var processIdentifier: pid_t { process.processIdentifier }
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

        var environment = ProcessInfo.processInfo.environment
        environment["MONSOON_HOME"] = home
        environment["TERM"] = "xterm"
        environment["NO_COLOR"] = "1"
        do {
            process = try SpawnedProcess(monsoonBinary, arguments, directory: directory, environment: environment, terminal: slavePath)
        } catch {
            close(master)
            throw error
        }
    }

    deinit {
        if process.isRunning { kill(processIdentifier, SIGKILL) }
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
        // Until nothing more comes for 0.3 s: a write under way when it stopped has reached us.
        var quiet = 0
        while quiet < 3 {
            try await Task.sleep(nanoseconds: 100_000_000)
            let before = raw.utf8.count + pending.count
            pump()
            quiet = raw.utf8.count + pending.count == before ? quiet + 1 : 0
        }
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
        while process.isRunning {
            pump()
            if Date() > deadline { throw CLITestError("monsoon did not exit within \(seconds) s") }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        pump()
        return process.terminationStatus
    }
}
