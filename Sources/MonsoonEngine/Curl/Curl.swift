import CCrypto
import CCurl

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

    /// Text for a curl result code.
    static func describe(_ code: CURLcode) -> String {
        String(cString: monsoon_curl_easy_strerror(code))
    }
}
