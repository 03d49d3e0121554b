import CLibc
import Glibc

/// Threads of our own on POSIX threads, each named as it starts (FoundationEssentials has no
/// `Thread`): a crash or `top -H` shows `monsoon.engine`, not the creator's name.
package enum NamedThread {
    /// Carries the closure through pthread_create's untyped argument.
    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a thread nobody joins.
    /// - Parameters:
    ///   - name: its first 15 bytes (Linux refuses longer ones).
    ///   - stackSize: the thread's stack, glibc's default (8 MiB) unless given.
    package static func detach(named name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        // Without a thread, the work it was to do would wait forever, unseen: the process
        // stops with the reason instead (only when the system is out of threads or memory).
        guard let thread = start(named: name, stackSize: stackSize, body) else { fatalError("cannot start the thread \(name): \(String(cString: strerror(errno)))") }
        pthread_detach(thread)
    }

    /// Starts `body` on a thread to join with `pthread_join` (so that "stopped" can mean the
    /// thread is gone, not only its work done); nil if it cannot be created.
    package static func start(named name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> pthread_t? {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            // Whole characters only: a cut one would grow to U+FFFD, and Linux refuses a name over 15 bytes.
            var name = Substring(start.name)
            while name.utf8.count > 15 { name.removeLast() }
            _ = monsoon_name_thread(String(name))   // a name is for people only
            start.body()
            return nil
        }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            errno = result
            return nil
        }
        return thread
    }
}
