import Foundation

extension EngineCore {
    /// Applies other processes' commands as if they had been called here (with the rows they
    /// name read first), started in the order they were posted (`pauseAll`, `resumeAll` and
    /// `adoptNewDownloads` finish later, on the disk worker), then deletes them.
    ///
    /// A chunk of 500 at a time, because each command's row is held in memory while its chunk
    /// is applied (a `get --no-wait` of 4,000 URLs hands over 4,000 claims, whose rows took
    /// 9 MB read at once); a batch that arrives meanwhile waits its turn.
    func apply(_ commands: [DownloadCommand], through seq: Int) {
        if persistence.queueCommands(commands, through: seq) { applyNextCommands() }
    }

    private func applyNextCommands(chunk: Int = 500) {
        guard let head = persistence.nextCommands(chunk: chunk) else { return }
        var ids: [DownloadID] = []
        for command in head {
            switch command {
            case .pause(let id), .resume(let id), .retry(let id), .remove(let id, _), .setPriority(let id, _), .claim(let id, _), .release(let id, _):
                ids.append(id)
            case .pauseAll, .resumeAll, .adoptNewDownloads:
                break
            }
        }
        // A failure to read is kept for persistenceError, and the chunk is tried again in a
        // second (the watcher has moved past it: nothing else would apply it in this run). A
        // row that cannot be read is left out: its command finds no download, and the ones
        // queued after it still apply.
        withRows(ids, skippingUnreadable: true, ifClosed: {}) { loop, read in
            guard case .success = read else {
                let inbox = loop.inbox
                DispatchQueue.global().asyncAfter(deadline: .now() + 1) { inbox.resume { $0.applyNextCommands(chunk: chunk) } }
                return
            }
            // What each command answers (no such download, its new state) has no one to go
            // to: the posting process has moved on. The outcome shows in the rows and events.
            for command in head {
                switch command {
                case .pause(let id): _ = loop.pause(id)
                case .resume(let id): _ = loop.resume(id)
                case .retry(let id): loop.retry(id, reply: .ignored)
                case .remove(let id, let deleteFile): _ = loop.remove(id, deleteFile: deleteFile)
                case .setPriority(let id, let priority): _ = loop.setPriority(priority, for: id)
                case .pauseAll: loop.pauseAll(reply: .ignored)
                case .resumeAll: loop.resumeAll(reply: .ignored)
                case .adoptNewDownloads: loop.adoptNewRows()
                case .claim(let id, let pid):
                    // A claim outlives its process when the runner never took it: honour only a live one.
                    if pid > 0 && (kill(pid, 0) == 0 || errno == EPERM) { _ = loop.claim([id], by: pid) }
                case .release(let id, let pid): if pid > 0 { loop.release(id, by: pid) }
                }
            }
            if let through = loop.persistence.applied(head.count) { loop.deleteCommands(through: through) }
            loop.applyNextCommands(chunk: chunk)
        }
    }

    /// Deletes the applied commands (on the disk worker, after the rows they changed).
    private func deleteCommands(through seq: Int) {
        let inbox = self.inbox
        persistence.hand(.job { store in
            do {
                try store?.deleteCommands(through: seq)
            } catch {
                // Kept for persistenceError; applied again at the next look, which is harmless
                // for these commands (each brings its download to a state, not a step).
                inbox.send(.storeFailed(ErrorBox(error: error)))
            }
        })
    }
}
