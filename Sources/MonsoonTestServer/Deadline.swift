import FoundationEssentials

/// Runs `body` and waits for its result for at most `seconds`: nil when it had not returned by
/// then, or when the waiting task is cancelled (`body` is then cancelled and left behind). For tests of something that must return rather
/// than hang, without measuring how long it took.
public func finishing<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () async -> T) async -> T? {
    let box = Locked<T?>(nil)
    let task = Task { let value = await body(); box.withLock { $0 = value } }
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if let value = box.withLock({ $0 }) { return value }
        do {
            try await Task.sleep(nanoseconds: 20_000_000)
        } catch {
            break   // the waiting test was cancelled: stop waiting
        }
    }
    task.cancel()
    return box.withLock { $0 }
}
