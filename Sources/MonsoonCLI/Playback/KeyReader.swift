import Foundation
import MonsoonEngine

/// `play`'s keys, read from a terminal put in raw mode (no echo, no line buffering; Ctrl-C still
/// interrupts). Nothing is read when the input is not a terminal: keys are then off.
final class KeyReader: @unchecked Sendable {
    // Unchecked: `keys` is behind its lock; `saved` is written once, before the thread starts.

    enum Key: Sendable, Equatable {
        case back, forward, pause, quit
    }

    private let descriptor: Int32
    private var saved = termios()
    private let keys = Locked<[Key]>([])

    /// Reads keys from `descriptor` when it is a terminal; nil otherwise.
    init?(descriptor: Int32) {
        guard descriptor >= 0, isatty(descriptor) == 1, tcgetattr(descriptor, &saved) == 0 else { return nil }
        self.descriptor = descriptor
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        // VMIN 1, VTIME 0: a read returns as soon as one key's bytes arrive.
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(descriptor, TCSANOW, &raw)
        // A second Ctrl-C exits at once, past `restore()`: the terminal is put back at exit too.
        Self.atExit.withLock { $0 = (descriptor, saved) }
        atexit { KeyReader.atExit.withLock { if var state = $0 { tcsetattr(state.0, TCSANOW, &state.1) } } }
        Thread { [self] in read() }.start()
    }

    /// The terminal to put back when the process exits.
    private static let atExit = Locked<(Int32, termios)?>(nil)

    /// The keys pressed since the last call.
    func take() -> [Key] { keys.withLock { keys in defer { keys.removeAll() }; return keys } }

    /// Puts the terminal back as it was.
    func restore() {
        tcsetattr(descriptor, TCSANOW, &saved)
        Self.atExit.withLock { $0 = nil }
    }

    /// Until the terminal closes: bytes to keys (arrows are `ESC [ D` and `ESC [ C`).
    private func read() {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            pending += buffer[..<count]
            var decoded: [Key] = []
            while let first = pending.first {
                if first == 0x1B {
                    guard pending.count >= 3 else { break }   // the rest of the sequence is on its way
                    if pending[1] == UInt8(ascii: "[") || pending[1] == UInt8(ascii: "O") {
                        if pending[2] == UInt8(ascii: "D") { decoded.append(.back) }
                        if pending[2] == UInt8(ascii: "C") { decoded.append(.forward) }
                    }
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
