import CCrypto
import FoundationEssentials

/// The dedicated thread that runs the engine loop, with an explicit join.
final class TransferThread: Sendable {
    /// Whether the thread has ended, and who waits for that.
    private final class Exit: Sendable {
        private struct State {
            var finished = false
            var joiners: [CheckedContinuation<Void, Never>] = []
        }

        private let state = Locked(State())

        func signal() {
            let joiners = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.finished = true
                defer { state.joiners.removeAll() }
                return state.joiners
            }
            for joiner in joiners { joiner.resume() }
        }

        func wait() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if state.finished { return true }
                    state.joiners.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        }
    }

    private let exit = Exit()

    /// Hands a store to the thread that will own it, and lets go of it there.
    final class Handover: @unchecked Sendable {
        // Safe: the creating thread lets go of the store once it is wrapped here, and
        // only the receiving thread takes it out (once), before using it.
        private var store: (any QueueStore)?
        init(_ store: (any QueueStore)?) { self.store = store }

        /// The store, which the box no longer holds (so it closes when its user lets go).
        func take() -> (any QueueStore)? {
            defer { store = nil }
            return store
        }
    }

    /// - Parameter store: the disk worker's connection to the queue's database (the loop itself
    ///   never reads the database), or nil for a queue in memory.
    init(configuration: EngineConfiguration, inbox: EngineInbox, hub: EventHub, store: (any QueueStore)?) {
        let exit = self.exit
        let workerHandover = Handover(store)
        NamedThread.detach(named: "monsoon.engine", stackSize: 1 << 20) {
            // The loop, and with it every curl handle and the store's connection, is made, used
            // and released on this thread alone, before a join returns.
            var loop: EngineCore? = EngineCore(configuration: configuration, inbox: inbox, hub: hub, workerStore: workerHandover.take())
            loop?.run()
            loop = nil
            // OpenSSL's state for this thread (curl's, the digests'), released before a join returns
            // rather than by the thread's destructors after it: in a process that started OpenSSL
            // before Monsoon (with its exit handler, see monsoon_crypto_init), an exit right after
            // the join would free what they use.
            OPENSSL_thread_stop()
            exit.signal()
        }
    }

    /// Returns once the thread has released curl and OpenSSL; it ends just after.
    func join() async {
        await exit.wait()
    }
}
