import Glibc
import MonsoonBasics

/// The multi handle, made once libcurl has loaded on a thread of its own. Loading takes
/// milliseconds (libcurl, its dozen libraries, OpenSSL's set-up); the loop does not wait for it
/// but takes its first commands meanwhile, so that a `get`'s rows are written as curl loads
/// (`EngineCore.run`). An engine whose queue is in memory (a podcast command's, for its feeds)
/// loads it only once a fetch or a download is asked of it. Transfer thread only.
struct CurlLoading {
    private(set) var multi: MultiHandle?
    private var loader: pthread_t?
    /// What runs once curl is ready; nil once loading has started, or curl was loaded without it (`handle`).
    private var loaded: (@Sendable () -> Void)?

    /// Starts loading now when `now`, else at `start()`.
    /// - Parameter loaded: runs once curl is ready, on the loading thread, or on this one when it is ready already.
    init(now: Bool, then loaded: @escaping @Sendable () -> Void) {
        self.loaded = loaded
        if now { start() }
    }

    /// Starts loading, unless it has started, curl is loaded, or another thread loads it (`Curl.load`).
    mutating func start() {
        guard let loaded else { return }
        self.loaded = nil
        loader = Curl.load(then: loaded)
    }

    /// The handle, made now if need be (and given to `inbox` to wake its poll): on the first call,
    /// after waiting for curl to load (loaded here when nothing started it).
    mutating func handle(attachingTo inbox: EngineInbox) -> MultiHandle {
        if let multi { return multi }
        loaded = nil
        join()
        let made = MultiHandle()
        inbox.attach(made)
        multi = made
        return made
    }

    /// Waits for the loading thread to end (at once when it has): nothing of its runs after the engine stops.
    mutating func join() {
        guard let thread = loader else { return }
        pthread_join(thread, nil)
        loader = nil
    }
}

/// libcurl, loaded ahead by a command about to download, on a thread of its own: curl takes
/// milliseconds to load, which the command spends opening its home meanwhile, and the engine it
/// makes then finds curl ready, or nearly. `finish()`, or letting go of it, waits for the thread
/// to end, so that none of it runs as the process exits.
public final class CurlPreload: Sendable {
    private let thread: Locked<pthread_t?>

    public init() {
        thread = Locked(Curl.load {})   // an engine made meanwhile waits for it (`CurlLoading`)
    }

    deinit {
        finish()
    }

    public func finish() {
        guard let running = thread.withLock({ thread in defer { thread = nil }; return thread }) else { return }
        pthread_join(running, nil)
    }
}
