import Foundation

/// A thread with a connection of its own that LISTENs for new jobs and calls `wake` for each
/// notification. After the connection breaks it connects again (with backoff, up to 30 s) and
/// LISTENs again: a notification sent meanwhile is lost, which the workers' polling covers.
final class NotificationListener: Sendable {
    private let stopped = Locked(false)
    private let done = DispatchSemaphore(value: 0)

    init(database: String, channel: String, wake: @escaping @Sendable () -> Void) {
        let stopped = self.stopped
        let done = self.done
        let thread = Thread {
            var delay = 0.5
            var connection: PostgresConnection?
            while !stopped.withLock({ $0 }) {
                do {
                    if connection == nil {
                        let fresh = try PostgresConnection(database)
                        try fresh.listen(channel)
                        connection = fresh
                        wake()   // what was sent while it was away is looked for now
                    } else if let open = connection, !open.isConnected {
                        try open.reconnect()
                        wake()
                    }
                    delay = 0.5
                    if let open = connection, !(try open.waitForNotifications(timeout: 1)).isEmpty { wake() }
                } catch {
                    // Unreachable or broken: polling goes on meanwhile; try again after a while.
                    Thread.sleep(forTimeInterval: delay)
                    delay = min(30, delay * 2)
                }
            }
            connection = nil
            done.signal()
        }
        thread.name = "monsoon.listener"
        thread.start()
    }

    /// Stops the thread (within a second) and waits for it.
    func stop() {
        stopped.withLock { $0 = true }
        done.wait()
    }
}

/// A value behind a lock, for the few that threads share.
final class Locked<Value: Sendable>: @unchecked Sendable {
    // Safe: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
