import CCurl

/// One libcurl easy handle.
///
/// - Important: confined to the transfer thread; never `Sendable`. `CURL*` and
///   `CURLM*` both import as `UnsafeMutableRawPointer`, so each gets its own type.
final class EasyHandle {
    let raw: UnsafeMutableRawPointer

    init() {
        Curl.ensureInitialised()
        guard let handle = monsoon_curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        raw = handle
        check(monsoon_easy_set_sockets_cloexec(raw), CURLOPT_SOCKOPTFUNCTION)
    }

    /// Added to the multi handle (`MultiHandle.add` and `remove` keep it): such a handle is never
    /// reset for another transfer.
    var isAdded = false

    deinit { monsoon_curl_easy_cleanup(raw) }   // removes it from the multi handle first, if it is there

    /// Back to a new handle's options for another transfer (`curl_easy_reset`), keeping what curl
    /// keeps across them (the TLS session and DNS caches) and the allocations a new handle makes.
    /// - Returns: whether the handle may serve another transfer. Not while curl still holds the
    ///   last one's receive buffer: libcurl 7.88 frees it only when the transfer leaves its
    ///   connection to no other (an HTTP/2 stream's stays), and then refuses to size it again,
    ///   while a reset would set the size back to its default, which could be more than the
    ///   buffer holds. Asking for a size, before the reset, tells which.
    func reset() -> Bool {
        guard monsoon_easy_setopt_long(raw, CURLOPT_BUFFERSIZE, Int(CURL_MAX_WRITE_SIZE)) == CURLE_OK else { return false }
        monsoon_curl_easy_reset(raw)
        check(monsoon_easy_set_sockets_cloexec(raw), CURLOPT_SOCKOPTFUNCTION)
        return true
    }

    // One setter per C argument type, never one overloaded on the Swift type.

    func setLong(_ option: CURLoption, _ value: Int) {
        check(monsoon_easy_setopt_long(raw, option, value), option)
    }

    func setString(_ option: CURLoption, _ value: String) {
        check(value.withCString { monsoon_easy_setopt_string(raw, option, $0) }, option)
    }

    func setPointer(_ option: CURLoption, _ value: UnsafeMutableRawPointer?) {
        check(monsoon_easy_setopt_pointer(raw, option, value), option)
    }

    func setHeaders(_ list: UnsafeMutablePointer<curl_slist>?) {
        check(monsoon_easy_setopt_slist(raw, CURLOPT_HTTPHEADER, list), CURLOPT_HTTPHEADER)
    }

    func setWriteFunction(_ option: CURLoption, _ function: curl_write_callback) {
        check(monsoon_easy_setopt_write_function(raw, option, function), option)
    }

    /// The receive buffer (SO_RCVBUF) of the connections this handle opens from now on
    /// (reused ones keep theirs); 0: the kernel's own.
    func setReceiveBuffer(_ bytes: Int) {
        check(monsoon_easy_set_receive_buffer(raw, Int32(clamping: bytes)), CURLOPT_SOCKOPTDATA)
    }

    func setDebugFunction(_ function: curl_debug_callback) {
        check(monsoon_easy_setopt_debug_function(raw, function), CURLOPT_DEBUGFUNCTION)
    }

    func setPrereqFunction(_ function: curl_prereq_callback) {
        check(monsoon_easy_setopt_prereq_function(raw, function), CURLOPT_PREREQFUNCTION)
    }

    /// Lets a transfer paused by its write callback go on (curl may deliver the held data
    /// before this returns). - Returns: curl's code (an error ends the transfer with it).
    func unpause() -> CURLcode {
        monsoon_easy_unpause(raw)
    }

    func long(_ info: CURLINFO) -> Int {
        var value = 0
        return monsoon_easy_getinfo_long(raw, info, &value) == CURLE_OK ? value : 0
    }

    func offset(_ info: CURLINFO) -> Int {
        var value: curl_off_t = 0
        return monsoon_easy_getinfo_off_t(raw, info, &value) == CURLE_OK ? Int(value) : 0
    }

    func string(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard monsoon_easy_getinfo_string(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    /// An option curl rejects is a programming error, or a libcurl built without a
    /// feature Monsoon relies on (protocol limits, TLS verification): never go on
    /// silently without it, in release builds too.
    private func check(_ code: CURLcode, _ option: CURLoption) {
        precondition(code == CURLE_OK, "curl_easy_setopt(\(option.rawValue)) failed: \(Curl.describe(code))")
    }
}
