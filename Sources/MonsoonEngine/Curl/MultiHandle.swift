import CCurl
import FoundationEssentials
import Glibc

/// The one libcurl multi handle.
///
/// - Important: every call but `wakeup()` must be made on the transfer thread.
///   `curl_multi_wakeup` is documented as callable from any thread.
final class MultiHandle {
    let raw: UnsafeMutableRawPointer

    init() {
        Curl.ensureInitialised()
        let before = Self.openDescriptors()
        guard let handle = monsoon_curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        raw = handle
        // curl_multi_init opens a socket pair for curl_multi_wakeup without close-on-exec,
        // and no option reaches it: mark what it opened, so child processes never inherit it.
        var earlier = before.makeIterator(), next = earlier.next()   // both in order: one walk
        for fd in Self.openDescriptors() {
            while let open = next, open < fd { next = earlier.next() }
            guard next != fd else { continue }
            let flags = fcntl(fd, F_GETFD)
            // One the disk worker opened or closed meanwhile (it works on as the handle is made) is
            // close-on-exec already, or fails here harmlessly.
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
        // Reuse connections across many transfers to the same host.
        _ = monsoon_multi_setopt_long(raw, CURLMOPT_MAXCONNECTS, 64)   // a known option and a valid value: cannot fail
    }

    func add(_ easy: EasyHandle) -> Bool {
        easy.isAdded = monsoon_curl_multi_add_handle(raw, easy.raw) == CURLM_OK
        return easy.isAdded
    }

    /// - Returns: false when curl refused, as it does from inside one of its callbacks: the
    ///   handle is still curl's then.
    @discardableResult
    func remove(_ easy: EasyHandle) -> Bool {
        guard monsoon_curl_multi_remove_handle(raw, easy.raw) == CURLM_OK else { return false }
        easy.isAdded = false
        return true
    }

    /// Drives every transfer as far as it can go without blocking.
    func perform() {
        var running: Int32 = 0
        while monsoon_curl_multi_perform(raw, &running) == CURLM_CALL_MULTI_PERFORM {}
    }

    /// The next finished transfer, if any: its easy handle and result.
    func nextDone() -> (UnsafeMutableRawPointer, CURLcode)? {
        var easy: UnsafeMutableRawPointer?
        var result = CURLE_OK
        guard monsoon_multi_info_read_done(raw, &easy, &result) == 1, let easy else { return nil }
        return (easy, result)
    }

    /// Waits for socket activity, curl's own timers, a wakeup or `milliseconds`.
    func poll(milliseconds: Int32) {
        var numfds: Int32 = 0
        monsoon_curl_multi_poll(raw, nil, 0, milliseconds, &numfds)
    }

    /// Interrupts `poll` from any thread.
    static func wakeup(_ raw: UnsafeMutableRawPointer) {
        monsoon_curl_multi_wakeup(raw)
    }

    /// The descriptors open now, in order, but the listing's own. Without /proc nothing is listed and
    /// nothing marked: the socket pair is then inherited, as it would be without this step.
    static func openDescriptors() -> [Int32] {
        guard let listing = opendir("/proc/self/fd") else { return [] }
        defer { closedir(listing) }
        var descriptors: [Int32] = []
        while let entry = readdir(listing) {
            if let number = Int32(FileTree.name(of: entry)), number != dirfd(listing) { descriptors.append(number) }
        }
        return descriptors.sorted()
    }

    /// Releases the handle; all easy handles must have been removed first.
    func cleanup() {
        monsoon_curl_multi_cleanup(raw)
    }
}
