import CCrypto
import CCurl

/// Process-wide libcurl set-up.
///
/// `curl_global_init` is not thread-safe and must run before any other curl call;
/// a `static let` gives us exactly-once initialisation under Swift's lazy-global lock.
enum Curl {
    private static let initialised: Bool = {
        // OpenSSL first, without its exit handler: curl_global_init would register it.
        monsoon_crypto_init()
        return curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    /// Initialises libcurl once; later calls are free.
    static func ensureInitialised() {
        precondition(initialised, "curl_global_init failed")
    }

    /// The libcurl version string, e.g. "7.88.1".
    static var version: String {
        ensureInitialised()
        guard let info = monsoon_version_info(), let version = info.pointee.version else { return "unknown" }
        return String(cString: version)
    }

    /// Text for a curl result code.
    static func describe(_ code: CURLcode) -> String {
        String(cString: curl_easy_strerror(code))
    }
}
