/// How a command answers its caller (a `DownloadManager` call, or nobody): exactly once, and
/// only when what it changed is saved.
struct CommandReply<T: Sendable>: Sendable {
    let deliver: @Sendable (Result<T, DownloadManagerError>) -> Void

    /// Nobody waits for the answer (a command from another process, say).
    static var ignored: CommandReply { CommandReply { _ in } }

    /// Answers once everything saved so far is committed; a failure to save it is the answer then.
    func callAsFunction(_ loop: EngineCore, _ result: Result<T, DownloadManagerError>) {
        loop.afterSaving { error in
            if case .success = result, let error {
                deliver(.failure(.storage("could not save the change", cause: error)))
            } else {
                deliver(result)
            }
        }
    }

    /// Answers `result` once everything saved so far is committed, whatever became of those saves:
    /// for a command whose own writes are done and decided it (an enqueue's inserts). The failed
    /// save of another download, in the same commit, is that download's to report (`storeFailed`).
    func afterOwnWrites(_ loop: EngineCore, _ result: Result<T, DownloadManagerError>) {
        loop.afterSaving { _ in deliver(result) }
    }

    /// The engine shut down before the command could finish.
    func shutDown() {
        deliver(.failure(.shutDown))
    }
}
