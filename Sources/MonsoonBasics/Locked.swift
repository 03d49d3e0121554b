import FoundationEssentials
import Glibc

/// A value that is only read and written under a lock.
///
/// A pthread mutex rather than `Synchronization.Mutex`: on Linux the latter locks
/// with raw futexes, which ThreadSanitizer cannot see, so every access under it is
/// reported as a race and `make tsan` could never be clean.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    // Safe to share: `value` is only touched inside `withLock`, with `mutex` held,
    // and what leaves the lock is `Sendable`.
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A lock around `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held. Keep it short, and never resume a
    /// continuation or call out to unknown code inside it.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

extension Locked where Value == Void {
    /// A plain lock: nothing inside but the right to run alone.
    package convenience init() {
        self.init(())
    }

    /// Runs `body` with the lock held. Locks directly: an `inout` access to the empty value sits at
    /// the mutex pointer's address, which ThreadSanitizer took for a race with the lock's readers.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
