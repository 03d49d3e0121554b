import CCurl

/// Easy handles whose transfers are over, reset for the next ones. A handle made and cleaned up
/// for each of a thousand small files cost more than a reset (`curl_easy_init` allocates and
/// clears several kilobytes, `curl_easy_cleanup` frees them), on the transfer thread.
///
/// - Important: confined to the transfer thread, as its handles are.
final class EasyHandlePool {
    private var idle: [EasyHandle] = []
    /// The most kept: about the transfers that run at once. Past it, a handle given back is
    /// cleaned up, so a burst of many leaves no more behind.
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// How many handles were made (not taken from those kept), for the tests of reuse.
    private(set) var made = 0

    /// A handle with no option set but the one every handle has.
    func take() -> EasyHandle {
        if let easy = idle.popLast() { return easy }
        made += 1
        return EasyHandle()
    }

    /// The handle of a transfer that is over (nothing refers to it any more): reset and kept,
    /// unless enough are kept already, it is still added to the multi handle (its cleanup then
    /// removes it), it saw a socket error (no reset clears `CURLINFO_OS_ERRNO`, and the next
    /// transfer's failure could be told with it), or curl still holds its last transfer's
    /// state (`EasyHandle.reset`).
    func giveBack(_ easy: EasyHandle) {
        guard idle.count < limit, !easy.isAdded, easy.long(CURLINFO_OS_ERRNO) == 0, easy.reset() else { return }
        idle.append(easy)
    }
}
