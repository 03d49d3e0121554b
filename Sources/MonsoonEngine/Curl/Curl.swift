import CCrypto
import CCurl
import MonsoonBasics

/// Process-wide libcurl set-up.
///
/// libcurl is opened (dlopen) and `curl_global_init` run before any other curl call, once:
/// a `static let` gives exactly-once initialisation under Swift's lazy-global lock.
enum Curl {
    /// Why libcurl cannot be used; nil when it is ready.
    private static let failure: String? = {
        // OpenSSL first, without its exit handler: curl_global_init would register it.
        monsoon_crypto_init()
        return monsoon_curl_open().map { String(cString: $0) }
    }()

    /// Opens libcurl once; later calls are free. Without libcurl no download can start: the
    /// process stops with the reason (Debian's package depends on it).
    static func ensureInitialised() {
        if let failure { fatalError("cannot open libcurl (\(failure)); install it: apt-get install libcurl4") }
    }

    /// The libcurl version string, e.g. "7.88.1".
    static var version: String {
        ensureInitialised()
        guard let info = monsoon_version_info(), let version = info.pointee.version else { return "unknown" }
        return String(cString: version)
    }

    /// Where loading stands, for engines that need curl: while a `CurlPreload` loads it they wait for
    /// it rather than start a thread of their own, which would wait for it anyway (a thread made while
    /// curl loads waits for glibc's loader lock).
    private enum Loading {
        case idle
        case loading(waiting: [@Sendable () -> Void])
        case loaded
    }

    private static let loading = Locked(Loading.idle)

    /// Notes that the caller's thread is about to load curl; false when another has (or is loading it).
    static func beginLoading() -> Bool {
        loading.withLock { state in
            guard case .idle = state else { return false }
            state = .loading(waiting: [])
            return true
        }
    }

    /// Called once curl is loaded: runs, on this thread, what waited for it.
    static func finishedLoading() {
        let waiting = loading.withLock { state -> [@Sendable () -> Void] in
            defer { state = .loaded }
            guard case .loading(let waiting) = state else { return [] }
            return waiting
        }
        for body in waiting { body() }
    }

    /// Runs `body` once curl is loaded: now when it is, else on the thread loading it. False when
    /// nobody is loading it: the caller loads it.
    static func whenLoaded(_ body: @escaping @Sendable () -> Void) -> Bool {
        let now: Bool? = loading.withLock { state in
            switch state {
            case .idle: return nil
            case .loaded: return true
            case .loading(var waiting):
                waiting.append(body)
                state = .loading(waiting: waiting)
                return false
            }
        }
        guard let now else { return false }
        if now { body() }
        return true
    }

    /// Text for a curl result code.
    static func describe(_ code: CURLcode) -> String {
        String(cString: monsoon_curl_easy_strerror(code))
    }
}
