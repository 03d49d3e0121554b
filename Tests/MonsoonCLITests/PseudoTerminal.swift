import Foundation
@testable import MonsoonCLI

/// The built `monsoon` on a pseudo-terminal of our own (openpty): its controlling terminal, so a
/// Ctrl-C typed into it is echoed as `^C` and interrupts it, and a resize (TIOCSWINSZ) sends it
/// SIGWINCH, as a terminal window does. What it draws is read from the master side and played on
/// a `VirtualScreen`.
final class PseudoTerminal: @unchecked Sendable {
    // Only touched from the test's task.
    private let master: Int32
    /// Our own descriptor of the terminal's side, kept to write a marker after what the program wrote (`resize`).
    private let slave: Int32
    private let process: SpawnedProcess
    private var processIdentifier: pid_t { process.processIdentifier }
    let screen: VirtualScreen
    /// Everything read so far, as it came.
    private(set) var raw = ""
    /// The same, in the pieces read, each with when it was read.
    private var pending: [UInt8] = []

    init(_ arguments: [String], in directory: String, home: String, columns: Int, rows: Int = 40) throws {
        guard FileManager.default.isExecutableFile(atPath: monsoonBinary) else {
            throw CLITestError("the monsoon binary is missing at \(monsoonBinary): build it with `swift build` (make test does)")
        }
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, &size) == 0 else { throw CLITestError("openpty failed: \(String(cString: strerror(errno)))") }
        self.master = master
        self.slave = slave
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
        // ttyname_r: ttyname's static buffer, shared by the tests running at the same time, may name another test's terminal.
        var name = [CChar](repeating: 0, count: 128)
        guard ttyname_r(slave, &name, name.count) == 0 else {
            close(master)
            close(slave)
            throw CLITestError("ttyname_r failed")
        }
        let slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        screen = VirtualScreen(columns: columns, rows: rows)

        var environment = ProcessInfo.processInfo.environment
        environment["MONSOON_HOME"] = home
        environment["TERM"] = "xterm"
        environment["NO_COLOR"] = "1"
        do {
            process = try SpawnedProcess(monsoonBinary, arguments, directory: directory, environment: environment, terminal: slavePath)
        } catch {
            close(master)
            close(slave)
            throw error
        }
    }

    deinit {
        if process.isRunning { kill(processIdentifier, SIGKILL) }
        close(master)
        close(slave)
    }

    /// Reads what has come and plays it on the screen.
    func pump() {
        read()
        play()
    }

    /// Reads what has come, unplayed.
    private func read() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Glibc.read(master, &buffer, buffer.count)
            guard count > 0 else { break }
            pending += buffer[0..<count]
        }
    }

    /// Plays what was read, but a character still split.
    private func play() {
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
        // Once every thread has stopped, nothing more is written at the old width; what was may
        // still be on its way through the terminal's buffers. A marker written after it on the
        // same side comes after it: once the marker is read, all of it is.
        try await waitUntil("monsoon stopped") { Self.isStopped(processIdentifier) }
        let marker = Array("\u{1}monsoon-test-marker\u{1}".utf8)
        guard marker.withUnsafeBytes({ write(slave, $0.baseAddress, $0.count) }) == marker.count else {
            throw CLITestError("cannot write to the terminal: \(String(cString: strerror(errno)))")
        }
        var at: Int?
        try await waitUntil("the marker read back") {
            read()
            at = pending.count < marker.count ? nil : (0...(pending.count - marker.count)).first { Array(pending[$0..<($0 + marker.count)]) == marker }
            return at != nil
        }
        if let at { pending.removeSubrange(at..<(at + marker.count)) }
        play()
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        screen.resize(columns: columns)
        kill(processIdentifier, SIGCONT)
    }

    /// Whether every thread of `pid` is stopped (state `T` in /proc).
    private static func isStopped(_ pid: pid_t) -> Bool {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !threads.isEmpty else { return false }   // gone: not stopped
        return threads.allSatisfy { thread in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),   // gone meanwhile: ended, not stopped
                  let close = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(after: close)...].split(separator: " ").first == "T"
        }
    }

    /// Reads on a thread of its own until the program has ended, so that the program never waits on
    /// a full terminal while the test's task waits for a turn of a busy pool. Touch nothing else meanwhile.
    func readUntilExit() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                var ready = pollfd(fd: self.master, events: Int16(POLLIN), revents: 0)
                while self.process.isRunning {
                    self.pump()
                    // Wakes as output comes; the bound only lets the loop see the program end.
                    _ = poll(&ready, 1, 50)
                }
                done.resume()
            }.start()
        }
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
