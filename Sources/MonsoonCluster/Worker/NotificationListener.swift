import FoundationEssentials
import Dispatch
import MonsoonEngine

/// A thread with a connection of its own that LISTENs for new jobs and calls `wake` for each
/// notification. After the connection breaks it connects again (with backoff, up to 30 s) and
/// LISTENs again: a notification sent meanwhile is lost, which the workers' polling covers.
final class NotificationListener: Sendable {
    private let stopped = Locked(false)
    private let done = DispatchSemaphore(value: 0)
    /// Ends a wait between two tries to connect at once, at the stop.
    private let interrupt = DispatchSemaphore(value: 0)

    init(database: String, channel: String, wake: @escaping @Sendable () -> Void) {
        let stopped = self.stopped
        let done = self.done
        let interrupt = self.interrupt
        NamedThread.detach(named: "monsoon.listen") {
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
                    _ = interrupt.wait(timeout: .now() + delay)   // timed out: time to try again; signalled: stopping
                    delay = min(30, delay * 2)
                }
            }
            connection = nil
            done.signal()
        }
    }

    /// Stops the thread and waits for it: within a second, or the end of a connection attempt under way.
    func stop() {
        stopped.withLock { $0 = true }
        interrupt.signal()
        done.wait()
    }
}
