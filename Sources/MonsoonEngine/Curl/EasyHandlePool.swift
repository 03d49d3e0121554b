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

    /// A handle with no option set but the one every handle has.
    func take() -> EasyHandle {
        idle.popLast() ?? EasyHandle()
    }

    /// The handle of a transfer that is over (nothing refers to it any more): reset and kept,
    /// unless enough are kept already, it is still added to the multi handle (its cleanup then
    /// removes it), or curl still holds its last transfer's state (`EasyHandle.reset`).
    func giveBack(_ easy: EasyHandle) {
        guard idle.count < limit, !easy.isAdded, easy.reset() else { return }
        idle.append(easy)
    }
}
