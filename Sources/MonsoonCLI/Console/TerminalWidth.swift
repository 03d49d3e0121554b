import Glibc
import Synchronization

/// The terminal's width in columns, as it is now. Given the terminal's descriptor, each read asks
/// the terminal (`TIOCGWINSZ`, a cheap call a few times a second): a live view drawn right after a
/// resize uses the new width even before SIGWINCH is handled; the binary's SIGWINCH handler
/// updates the width kept for when the terminal cannot say.
public final class TerminalWidth: Sendable {
    private let columns = Atomic<Int>(80)
    /// The terminal's descriptor, or -1 for a fixed width (tests, a pipe).
    private let descriptor: Int32

    public init(_ columns: Int, descriptor: Int32 = -1) {
        self.descriptor = descriptor
        self.columns.store(columns, ordering: .relaxed)
    }

    public var current: Int {
        if descriptor >= 0, let measured = Self.measure(descriptor) { return measured }
        return columns.load(ordering: .relaxed)
    }

    /// After a resize.
    public func update(_ columns: Int) {
        guard columns > 0 else { return }
        self.columns.store(columns, ordering: .relaxed)
    }

    /// The columns of the terminal on `descriptor`, or nil when it cannot say.
    public static func measure(_ descriptor: Int32) -> Int? {
        var size = winsize()
        return ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : nil
    }
}
