/// The engine's failures to save the queue, kept apart from the transfer thread so that they
/// outlive it: a save that fails while the engine shuts down (the last one, which keeps the
/// downloads' final bytes) is still reported by `DownloadManager.shutdown()` once the thread
/// has ended and its inbox refuses every job.
final class SaveFailures: Sendable {
    private let latest = Locked<ErrorBox?>(nil)

    /// Keeps `error` as the latest failure to save (disk worker).
    func record(_ error: Error) {
        let box = ErrorBox(error: error)
        latest.withLock { $0 = box }
    }

    /// The latest failure to save, if any save failed.
    var last: Error? {
        latest.withLock { $0 }?.error
    }
}
