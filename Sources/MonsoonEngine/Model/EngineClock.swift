import FoundationEssentials

/// Where the engine reads the time for its own timings: when a retry is due, how long a host is
/// held, when progress is reported and a checkpoint or a disk measurement is due. The system
/// clock by default; a test passes a clock it drives, so that a wait of an hour is a step of its
/// own, neither slept nor dependent on the machine's speed.
///
/// curl's own timers (connect timeout, the stall limit) run on curl's clock: they are curl's.
public struct EngineClock: Sendable, Equatable {
    /// Boxed, so that two configurations compare by the clock they share.
    private final class Source: Sendable {
        let now: @Sendable () -> Date
        init(_ now: @escaping @Sendable () -> Date) { self.now = now }
    }

    private let source: Source

    /// A clock reading `now`.
    /// - Important: `now` is called on the engine's transfer thread, often: it must be cheap and never block.
    public init(_ now: @escaping @Sendable () -> Date) {
        source = Source(now)
    }

    public var now: Date { source.now() }

    public static let system = EngineClock { Date() }

    public static func == (lhs: EngineClock, rhs: EngineClock) -> Bool {
        lhs.source === rhs.source
    }
}
