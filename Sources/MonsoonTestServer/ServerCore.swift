import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The server's shared state and threads.
///
/// Kept apart from ``TestServer`` so that the server threads, which hold the core strongly,
/// do not keep the public object alive: when the last `TestServer` reference goes away its
/// `deinit` stops the core, whose threads then finish.
final class ServerCore: Sendable {
    let listener: Int32
    let port: Int

    private struct RouteEntry {
        var route: Route
        /// Remaining uses of each of `route.faults`, index for index.
        var remaining: [Int]
    }

    private struct State {
        var routes: [String: RouteEntry] = [:]
        var requests: [RecordedRequest] = []
        var active = 0
        var maxActive = 0
        /// Open client sockets; `stop()` shuts them down. A connection thread removes its fd
        /// here (under the lock) before closing it, so `stop()` never touches a reused fd number.
        var connections: Set<Int32> = []
        var nextConnectionID = 1
        var stopped = false
        var acceptThread: pthread_t?
        /// Connection threads that have finished their work and wait to be joined.
        var exited: [pthread_t] = []
        var deliveries: [Delivery] = []
    }

    private let state = Locked(State())
    private let sentBytes = Atomic<Int>(0)
    /// Whether each body write is recorded as a `Delivery` (off unless asked for: a benchmark's
    /// gigabytes would fill memory with them).
    private let recording = Atomic<Bool>(false)
    /// SO_SNDBUF for connections accepted from now on (0: the system's, which grows to MiBs).
    private let sendBuffer = Atomic<Int>(0)
    /// Mirrors `State.stopped` for cheap polling by sleeping or streaming threads.
    private let stopping = Atomic<Bool>(false)
    /// Every server thread is entered here; `stop()` waits for all of them, then joins them.
    private let threads = DispatchGroup()

    /// 1 MiB instead of the 8 MiB default: connections need little stack, and benchmarks open many.
    private static let threadStack = 1 << 20

    init(port: Int, anyAddress: Bool = false) throws {
        (listener, self.port) = try Socket.listen(port: port, anyAddress: anyAddress)
    }

    /// Starts the accept thread; throws if it cannot be created (the listener is closed then).
    func start() throws {
        threads.enter()
        let accepting = NamedThread.start(named: "srv\(port)-acc", stackSize: Self.threadStack) { [self] in
            acceptLoop()
            threads.leave()
        }
        guard let accepting else {
            threads.leave()
            // Marked stopped so the stop() from TestServer's deinit leaves the closed fd alone.
            state.withLock { $0.stopped = true }
            close(listener)
            throw TestServerError(operation: "pthread_create", code: EAGAIN)
        }
        state.withLock { $0.acceptThread = accepting }
    }

    private func acceptLoop() {
        while true {
            let fd = Socket.accept(listener)
            joinExitedThreads()
            if fd < 0 {
                if stopping.load(ordering: .acquiring) { return }
                let code = errno
                if code != EINTR && code != ECONNABORTED {
                    usleep(10_000)  // e.g. EMFILE: back off instead of spinning
                }
                continue
            }
            var size = Int32(clamping: sendBuffer.load(ordering: .relaxed))
            if size > 0 { setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
            let id: Int? = state.withLock { state in
                guard !state.stopped else { return nil }
                state.connections.insert(fd)
                defer { state.nextConnectionID += 1 }
                return state.nextConnectionID
            }
            guard let id else {
                close(fd)
                return
            }
            // Entered before this (accept) thread can leave, so `stop()` cannot miss it.
            threads.enter()
            let spawned = NamedThread.start(named: "srv\(port)-\(id)", stackSize: Self.threadStack) { [self] in
                Connection(fd: fd, id: id, core: self).run()
                connectionClosed(fd, thread: pthread_self())
                threads.leave()
            }
            if spawned == nil {  // out of threads: refuse this client rather than fail the server
                state.withLock { _ = $0.connections.remove(fd) }
                close(fd)
                threads.leave()
            }
        }
    }

    /// Called by a connection thread as its last act: releases the socket and queues the
    /// thread to be joined (by the accept thread at its next accept, or by `stop()`).
    private func connectionClosed(_ fd: Int32, thread: pthread_t) {
        state.withLock { state in
            state.connections.remove(fd)
            state.exited.append(thread)
        }
        close(fd)
    }

    private func joinExitedThreads() {
        let exited = state.withLock { state in
            defer { state.exited.removeAll() }
            return state.exited
        }
        for thread in exited { pthread_join(thread, nil) }
    }

    /// Idempotent. Returns once every server thread has finished; the first caller also joins them.
    func stop() {
        let acceptThread = state.withLock { state -> pthread_t? in
            guard !state.stopped else { return nil }
            state.stopped = true
            stopping.store(true, ordering: .releasing)
            // shutdown (not close) wakes threads blocked in accept/recv/send/poll on these sockets.
            shutdown(listener, Int32(SHUT_RDWR))
            for fd in state.connections { shutdown(fd, Int32(SHUT_RDWR)) }
            defer { state.acceptThread = nil }
            return state.acceptThread
        }
        threads.wait()
        if let acceptThread {
            pthread_join(acceptThread, nil)
            joinExitedThreads()  // the accept thread has exited, so nobody else joins now
            close(listener)
        }
    }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    func setRoute(_ path: String, _ route: Route) {
        let entry = RouteEntry(route: route, remaining: route.faults.map(\.times))
        state.withLock { $0.routes[path] = entry }
    }

    func removeRoute(_ path: String) {
        state.withLock { _ = $0.routes.removeValue(forKey: path) }
    }

    /// The route for `path` and the fault that applies to this request (consuming one use of it).
    func route(for path: String, consumingFault: Bool) -> (Route?, Fault?) {
        state.withLock { state in
            guard var entry = state.routes[path] else { return (nil, nil) }
            var fault: Fault? = nil
            if consumingFault, let index = entry.remaining.firstIndex(where: { $0 > 0 }) {
                fault = entry.route.faults[index]
                if entry.remaining[index] != Int.max { entry.remaining[index] -= 1 }
                state.routes[path] = entry
            }
            return (entry.route, fault)
        }
    }

    /// Records a request and counts it as being answered until `requestFinished()`.
    func requestStarted(_ request: RecordedRequest) {
        state.withLock { state in
            state.requests.append(request)
            state.active += 1
            state.maxActive = max(state.maxActive, state.active)
        }
    }

    func requestFinished() {
        state.withLock { $0.active -= 1 }
    }

    func addSentBytes(_ count: Int) {
        sentBytes.add(count, ordering: .relaxed)
    }

    func recordDeliveries(sendBuffer bytes: Int?) {
        sendBuffer.store(bytes ?? 0, ordering: .relaxed)
        recording.store(true, ordering: .relaxed)
    }

    var isRecordingDeliveries: Bool { recording.load(ordering: .relaxed) }

    func recordDelivery(_ delivery: Delivery) {
        state.withLock { $0.deliveries.append(delivery) }
    }

    /// A copy made under the lock, as `requests` is.
    var deliveries: [Delivery] { state.withLock { $0.deliveries.map { $0 } } }

    /// A copy made under the lock, sharing no storage with the list the connections append to:
    /// ThreadSanitizer does not see a shared buffer's reference count as ordering a read of it
    /// on a test's thread before a later append that reuses it.
    var requests: [RecordedRequest] { state.withLock { $0.requests.map { $0 } } }

    /// The requests that `isIncluded` keeps, chosen under the lock (see `requests`).
    func requests(where isIncluded: (RecordedRequest) -> Bool) -> [RecordedRequest] {
        state.withLock { $0.requests.filter(isIncluded) }
    }
    var maxActive: Int { state.withLock { $0.maxActive } }
    var openConnections: Int { state.withLock { $0.connections.count } }
    var bodyBytesSent: Int { sentBytes.load(ordering: .relaxed) }

    func resetStatistics() {
        state.withLock { state in
            state.requests.removeAll()
            state.deliveries.removeAll()
            // Requests in flight right now still count towards the new maximum.
            state.maxActive = state.active
            sentBytes.store(0, ordering: .relaxed)
        }
    }
}
