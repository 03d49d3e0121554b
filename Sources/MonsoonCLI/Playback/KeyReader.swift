import FoundationEssentials
import MonsoonBasics
import Glibc
import Dispatch
import Synchronization

/// `play`'s keys, read from a terminal put in raw mode (no echo, no line buffering; Ctrl-C still
/// interrupts). Nothing is read when the input is not a terminal: keys are then off.
///
/// The reader thread waits in `poll` on the terminal and a wake-up pipe, so `stop()` ends it
/// and nothing the user types after `play` is swallowed.
final class KeyReader: @unchecked Sendable {
    // Unchecked: `keys` is behind its lock; `saved` and the descriptors are set before the
    // thread starts and only read afterwards; `done` is a semaphore.

    enum Key: Sendable, Equatable { case back, forward, pause, quit }

    private let descriptor: Int32
    private var saved = termios()
    private let keys = Mutex<[Key]>([])
    private var wake: [Int32] = [-1, -1]
    private let done = DispatchSemaphore(value: 0)

    /// Reads keys from `descriptor` when it is a terminal; nil otherwise.
    init?(descriptor: Int32) {
        guard descriptor >= 0, isatty(descriptor) == 1, tcgetattr(descriptor, &saved) == 0, pipe(&wake) == 0 else { return nil }
        for end in wake { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }   // only children could inherit them: mpv gets none anyway
        self.descriptor = descriptor
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        // VMIN 1, VTIME 0: a read returns as soon as one key's bytes arrive.
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(descriptor, TCSANOW, &raw)
        // A second Ctrl-C exits at once, past `stop()`: the terminal is put back at exit too.
        Self.atExit.withLock { $0 = (descriptor, saved) }
        NamedThread.detach(named: "monsoon.keys") { [self] in
            read()
            done.signal()
        }
    }

    deinit {
        close(wake[0])
        close(wake[1])
    }

    /// The keys pressed since the last call.
    func take() -> [Key] { keys.withLock { keys in defer { keys.removeAll() }; return keys } }

    /// Ends the reader and puts the terminal back as it was.
    func stop() {
        var byte: UInt8 = 0
        _ = write(wake[1], &byte, 1)   // cannot fail short of a closed pipe, which only deinit does
        done.wait()
        tcsetattr(descriptor, TCSANOW, &saved)
        Self.atExit.withLock { $0 = nil }
    }

    /// The terminal to put back when the process exits.
    private static let atExit: Mutex<(Int32, termios)?> = {
        atexit { KeyReader.atExit.withLock { if var state = $0 { tcsetattr(state.0, TCSANOW, &state.1) } } }
        return Mutex(nil)
    }()

    /// Until `stop()` or the terminal closes: bytes to keys (arrows are `ESC [ D` and `ESC [ C`).
    private func read() {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        var watched = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&watched, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, watched[1].revents == 0, watched[0].revents & Int16(POLLIN) != 0 else { return }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            pending += buffer[..<count]
            var decoded: [Key] = []
            while let first = pending.first {
                if first == 0x1B {
                    if pending.count == 1 { break }   // the rest of an arrow may be on its way
                    guard pending[1] == UInt8(ascii: "[") || pending[1] == UInt8(ascii: "O") else {
                        pending.removeFirst()   // a lone Escape: ignored, the next key counts
                        continue
                    }
                    guard pending.count >= 3 else { break }
                    if pending[2] == UInt8(ascii: "D") { decoded.append(.back) }
                    if pending[2] == UInt8(ascii: "C") { decoded.append(.forward) }
                    pending.removeFirst(3)
                    continue
                }
                if first == UInt8(ascii: " ") { decoded.append(.pause) }
                if first == UInt8(ascii: "q") || first == UInt8(ascii: "Q") { decoded.append(.quit) }
                pending.removeFirst()
            }
            if !decoded.isEmpty { keys.withLock { $0 += decoded } }
        }
    }
}
