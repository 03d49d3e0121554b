import CCrypto
import CCurl
import Glibc
import MonsoonBasics

/// Process-wide libcurl set-up.
///
/// libcurl is opened (dlopen) and `curl_global_init` run before any other curl call, once:
/// a `static let` gives exactly-once initialisation under Swift's lazy-global lock.
enum Curl {
    /// libcurl opened, once (a thread that needs it meanwhile waits under the lazy global's lock).
    private static let opened: Void = {
        // OpenSSL first, without its exit handler: curl_global_init would register it.
        monsoon_crypto_init()
        guard let failure = monsoon_curl_open() else { return }
        // No download can start (Debian's package depends on libcurl; a build from source may
        // lack it). The process ends here as a kill would end it: committed rows stay, the rest
        // rolls back, no part exists yet. One line, status 1 ("another error"), from whichever
        // thread asked first; the others wait for this initialiser and never return.
        StandardError.write("monsoon: cannot open libcurl: \(shown(String(cString: failure))); install or upgrade it: apt-get install libcurl4\n")
        _exit(1)
    }()

    /// The loader's reason with its control characters escaped as `TerminalText` escapes them
    /// (`\x1B`): it names paths from the user's `LD_LIBRARY_PATH`.
    private static func shown(_ reason: String) -> String {
        var text = ""
        for scalar in reason.unicodeScalars {
            guard InvisibleCharacters.isControl(scalar) else {
                text.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            text += "\\x" + (hex.count < 2 ? "0" : "") + hex
        }
        return text
    }

    /// Opens libcurl once; later calls are free.
    static func ensureInitialised() {
        _ = opened
    }

    /// The libcurl version string, e.g. "7.88.1".
    static var version: String {
        ensureInitialised()
        guard let info = monsoon_version_info(), let version = info.pointee.version else { return "unknown" }
        return String(cString: version)
    }

    /// Where loading stands: one thread loads curl (a `CurlPreload`'s, or an engine's), and whoever
    /// needs it meanwhile waits for that one rather than start another, which would wait for it
    /// anyway (a thread made while curl loads waits for glibc's loader lock).
    private enum Loading {
        case idle
        case loading(waiting: [@Sendable () -> Void])
        case loaded
    }

    private static let loading = Locked(Loading.idle)

    /// Runs `body` once curl is loaded: now when it is, else on the thread loading it.
    /// - Returns: the thread that loads curl when this call started it, for the caller to join; nil
    ///   when curl was loaded or being loaded already, or no thread could be had (loaded here, then).
    static func load(then body: @escaping @Sendable () -> Void) -> pthread_t? {
        let start: Bool? = loading.withLock { state in
            switch state {
            case .idle:
                state = .loading(waiting: [body])
                return true
            case .loading(var waiting):
                waiting.append(body)
                state = .loading(waiting: waiting)
                return false
            case .loaded:
                return nil
            }
        }
        guard let start else {
            body()
            return nil
        }
        guard start else { return nil }
        let run: @Sendable () -> Void = {
            ensureInitialised()
            OPENSSL_thread_stop()   // what OpenSSL kept for this thread, released before a join returns
            let waiting = loading.withLock { state -> [@Sendable () -> Void] in
                defer { state = .loaded }
                guard case .loading(let waiting) = state else { return [] }
                return waiting
            }
            for body in waiting { body() }
        }
        let thread = NamedThread.start(named: "monsoon.curl", stackSize: 1 << 20, run)
        if thread == nil { run() }
        return thread
    }

    /// Text for a curl result code.
    static func describe(_ code: CURLcode) -> String {
        String(cString: monsoon_curl_easy_strerror(code))
    }
}
