import FoundationEssentials

/// Holds a route's answers until the test opens it (``Route/gate``): a test that must do
/// something between a request's arrival and its answer (a fault made on purpose, say) does it
/// at its own pace, however busy the machine, where a ``Route/firstByteDelay`` would race it.
/// With ``Route/gateAfter``, the answer is held mid-body instead: a transfer in flight for as
/// long as the test needs, where a throttle would only make it last a while.
public final class Gate: Sendable {
    private let isOpenNow = Locked(false)

    public init() {}

    /// Lets every answer held, and every later one, go.
    public func open() {
        isOpenNow.withLock { $0 = true }
    }

    public var isOpen: Bool { isOpenNow.withLock { $0 } }
}
