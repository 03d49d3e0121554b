import Synchronization

/// The terminal's width in columns, as it is now: the binary reads it again when the terminal
/// is resized (SIGWINCH), and the live view redraws at the new width.
public final class TerminalWidth: Sendable {
    private let columns = Atomic<Int>(80)

    public init(_ columns: Int) {
        self.columns.store(columns, ordering: .relaxed)
    }

    public var current: Int { columns.load(ordering: .relaxed) }

    /// After a resize.
    public func update(_ columns: Int) {
        guard columns > 0 else { return }
        self.columns.store(columns, ordering: .relaxed)
    }
}
