import CCrypto
import Glibc
import MonsoonBasics

/// The multi handle, made once libcurl has loaded on a thread of its own. Loading takes
/// milliseconds (libcurl, its dozen libraries, OpenSSL's set-up); the loop does not wait for it
/// but takes its first commands meanwhile, so that a `get`'s rows are written as curl loads
/// (`EngineCore.run`). Transfer thread only.
struct CurlLoading {
    private(set) var multi: MultiHandle?
    private var loader: pthread_t?

    /// Starts loading, unless it is loaded or a `CurlPreload` loads it; `loaded` runs once curl is
    /// ready, on the loading thread (on this one, at once, when it is loaded or no thread can be had).
    init(then loaded: @escaping @Sendable () -> Void) {
        guard !Curl.whenLoaded(loaded) else { return }
        let load: @Sendable () -> Void = {
            Curl.ensureInitialised()
            OPENSSL_thread_stop()   // what OpenSSL kept for this thread, released before a join returns
            Curl.finishedLoading()
            loaded()
        }
        loader = NamedThread.start(named: "monsoon.curl", stackSize: 1 << 20, load)
        if loader == nil { load() }   // no thread to be had: here, then
    }

    /// The handle, made now if need be (and given to `inbox` to wake its poll): on the first call,
    /// after waiting for curl to load.
    mutating func handle(attachingTo inbox: EngineInbox) -> MultiHandle {
        if let multi { return multi }
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
        guard Curl.beginLoading() else {
            thread = Locked(nil)
            return
        }
        let load: @Sendable () -> Void = {
            Curl.ensureInitialised()
            OPENSSL_thread_stop()
            Curl.finishedLoading()   // the engines waiting go on (a job each in their inboxes)
        }
        let started = NamedThread.start(named: "monsoon.curl", stackSize: 1 << 20, load)
        if started == nil { load() }   // no thread to be had: here, then
        thread = Locked(started)
    }

    deinit {
        finish()
    }

    public func finish() {
        guard let running = thread.withLock({ thread in defer { thread = nil }; return thread }) else { return }
        pthread_join(running, nil)
    }
}
