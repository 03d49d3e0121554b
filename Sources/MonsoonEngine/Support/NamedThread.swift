import Foundation

extension Thread {
    /// Starts `body` on a new thread named `name`, of 15 bytes at most (Linux refuses longer ones).
    ///
    /// The thread names itself: on Linux, Foundation drops a name set before `start()`, and the
    /// thread kept its creator's, often a Dispatch thread's ("oot.default-qos"): a crash of the
    /// transfer thread at exit was reported as one of Dispatch's.
    package static func detachNewThread(named name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        assert(name.utf8.count <= 15, "Linux refuses a thread name over 15 bytes")
        let thread = Thread {
            Thread.current.name = name
            body()
        }
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }
}
