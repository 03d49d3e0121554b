import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// POSIX threads that can be joined.
///
/// Foundation's `Thread` cannot be joined, so `stop()` could only learn that a thread's work
/// was done, not that the thread was gone. With pthread_join, "stopped" means no server
/// thread exists any more (tests check for leaked threads by name).
enum JoinableThread {
    /// Carries the closure through pthread_create's untyped argument.
    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a new joinable thread named `name` (at most 15 bytes are kept); nil if it cannot be created.
    static func spawn(name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t? {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        // 1 MiB instead of the 8 MiB default: connections need little stack, and benchmarks open many.
        pthread_attr_setstacksize(&attributes, 1 << 20)
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            // pthread_setname_np is not exported by Swift's Glibc module; Foundation names the
            // current thread through it.
            Thread.current.name = String(decoding: start.name.utf8.prefix(15), as: UTF8.self)
            start.body()
            return nil
        }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            return nil
        }
        return thread
    }
}
