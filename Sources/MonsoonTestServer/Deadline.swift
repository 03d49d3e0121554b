import Foundation

/// Runs `body` and waits for its result for at most `seconds`: nil when it had not returned by
/// then (it is then cancelled and left behind). For tests of something that must return rather
/// than hang, without measuring how long it took.
public func result<T: Sendable>(within seconds: Double, of body: @escaping @Sendable () async -> T) async -> T? {
    let box = Locked<T?>(nil)
    let task = Task { let value = await body(); box.withLock { $0 = value } }
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if let value = box.withLock({ $0 }) { return value }
        // A cancelled test ends the sleep early; the loop then checks once more and gives up at the deadline.
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    task.cancel()
    return box.withLock { $0 }
}
