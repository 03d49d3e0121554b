import FoundationEssentials
import Glibc
import Dispatch

/// A change to the queue asked for by another process.
///
/// `@nonexhaustive`: commands will be added, so a `switch` outside this package needs a `default`.
@nonexhaustive
public enum DownloadCommand: Sendable, Equatable {
    /// Stops the download, keeping its bytes (as `DownloadManager.pause`).
    case pause(DownloadID)
    /// Queues a paused or failed download again, from its part file (as `DownloadManager.resume`).
    case resume(DownloadID)
    /// Queues a failed download, or one waiting to retry, now with fresh retry counters (as `DownloadManager.retry`).
    case retry(DownloadID)
    /// Forgets the download and deletes its part file; the finished file too when `deleteFile` (as `DownloadManager.remove`).
    case remove(DownloadID, deleteFile: Bool)
    /// Gives the download a new priority, used the next time a transfer starts (as `DownloadManager.setPriority`).
    case setPriority(DownloadID, Int)
    /// Pauses every download that would run (as `DownloadManager.pauseAll`).
    case pauseAll
    /// Queues every paused download again (as `DownloadManager.resumeAll`).
    case resumeAll
    /// Downloads were added to the store by another process: take them in.
    case adoptNewDownloads
    /// The process `pid` (a `monsoon get` that handed its URLs over) waits for this download:
    /// start it even with `QueueScope.claimedOnly`. Ignored once that process is gone.
    case claim(DownloadID, by: Int32)
    /// The process `pid` stopped waiting for this download: once nobody else wants it, a
    /// `.claimedOnly` engine stops it and leaves it queued.
    case release(DownloadID, by: Int32)

    package var row: (id: String?, action: String, argument: String?) {
        switch self {
        case .pause(let id): return (id.rawValue, "pause", nil)
        case .resume(let id): return (id.rawValue, "resume", nil)
        case .retry(let id): return (id.rawValue, "retry", nil)
        case .remove(let id, let deleteFile): return (id.rawValue, "remove", deleteFile ? "deleteFile" : nil)
        case .setPriority(let id, let priority): return (id.rawValue, "priority", String(priority))
        case .pauseAll: return (nil, "pauseAll", nil)
        case .resumeAll: return (nil, "resumeAll", nil)
        case .adoptNewDownloads: return (nil, "adopt", nil)
        case .claim(let id, let pid): return (id.rawValue, "claim", String(pid))
        case .release(let id, let pid): return (id.rawValue, "release", String(pid))
        }
    }

    /// The download the command names; nil for one on every download.
    var download: DownloadID? {
        switch self {
        case .pause(let id), .resume(let id), .retry(let id), .remove(let id, _), .setPriority(let id, _), .claim(let id, _), .release(let id, _): id
        case .pauseAll, .resumeAll, .adoptNewDownloads: nil
        }
    }

    /// Carries the command out as if it had been called here (its download's row read beforehand).
    /// Its answer has no one to go to, the poster has moved on: the outcome shows in rows and events.
    func apply(to loop: EngineLoop) {
        switch self {
        case .pause(let id): _ = loop.pause(id)
        case .resume(let id): _ = loop.resume(id)
        case .retry(let id): loop.retry([id], reply: .ignored)
        case .remove(let id, let deleteFile): _ = loop.remove(id, deleteFile: deleteFile)
        case .setPriority(let id, let priority): _ = loop.setPriority(priority, for: id)
        case .pauseAll: loop.pauseAll(reply: .ignored)
        case .resumeAll: loop.resumeAll(reply: .ignored)
        case .adoptNewDownloads: loop.adoptNewRows(replying: [])
        case .claim(let id, let pid):
            // A claim outlives its process when the runner never took it: honour only a live one.
            if pid > 0 && (kill(pid, 0) == 0 || errno == EPERM) { _ = loop.claim([id], by: pid) }
        case .release(let id, let pid): if pid > 0 { loop.release(id, by: pid) }
        }
    }

    package init?(id: String?, action: String, argument: String?) {
        let download = id.map(DownloadID.init(rawValue:))
        switch (action, download) {
        case ("pause", let id?): self = .pause(id)
        case ("resume", let id?): self = .resume(id)
        case ("retry", let id?): self = .retry(id)
        case ("remove", let id?): self = .remove(id, deleteFile: argument == "deleteFile")
        case ("priority", let id?): self = .setPriority(id, Int(argument ?? "") ?? 0)
        case ("pauseAll", _): self = .pauseAll
        case ("resumeAll", _): self = .resumeAll
        case ("adopt", _): self = .adoptNewDownloads
        case ("claim", let id?): self = .claim(id, by: Int32(argument ?? "") ?? 0)
        case ("release", let id?): self = .release(id, by: Int32(argument ?? "") ?? 0)
        default: return nil
        }
    }
}

/// Watches the database for commands from other processes, on its own thread and
/// connection: a cheap `PRAGMA data_version` check four times a second, so the
/// transfer thread itself never polls. Its first look, and the opening of its connection, come
/// a quarter of a second after it starts: a run shorter than that (a small `get`) opens none.
/// `stop()` wakes it at once; `join()` waits until it has ended and closed its connection.
final class CommandWatcher: Sendable {
    private let stopped = Locked(false)
    /// Signalled by `stop()`: ends the wait between two looks at once.
    private let wakeup = DispatchSemaphore(value: 0)
    /// Signalled by the thread when it has ended (its connection closed).
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - open: opens its connection, on the watcher's thread; a failure is reported as a failure
    ///     to read (`persistenceError`), and the next look tries again.
    ///   - left: the commands left before the queue opened, applied now; the watcher reads those after.
    init(open: @escaping @Sendable () throws -> any QueueStore, after left: (commands: [DownloadCommand], last: Int), inbox: EngineInbox) {
        let stopped = self.stopped
        let wakeup = self.wakeup
        let finished = self.finished
        if !left.commands.isEmpty { inbox.post { loop in loop.apply(left.commands, through: left.last) } }
        NamedThread.detach(named: "monsoon.watcher") {
            var store: (any QueueStore)?
            var lastVersion = -1
            var lastSeen = left.last
            var failing = false
            while true {
                // A look four times a second, the first a quarter of a second in; at once on stop.
                _ = wakeup.wait(timeout: .now() + 0.25)
                if stopped.withLock({ $0 }) { break }
                // data_version moves when another connection commits (the transfer thread's
                // own commits too); only then is the table read, and only read. A failed read
                // is tried again at the next look (the commands stay in the table meanwhile) and
                // reported for persistenceError, once until a read works again.
                do {
                    let current = try store ?? open()
                    store = current
                    let version = try current.changeCounter()
                    if version != lastVersion {
                        let (commands, last) = try current.commands(after: lastSeen)
                        lastVersion = version
                        if last > lastSeen {
                            lastSeen = last
                            inbox.post { loop in loop.apply(commands, through: last) }
                        }
                    }
                    failing = false
                } catch {
                    if !failing {
                        inbox.send(.storeFailed(ErrorBox(error: error)))
                    }
                    failing = true
                }
            }
            store = nil   // the connection closes here, on the thread that used it
            finished.signal()
        }
    }

    func stop() {
        stopped.withLock { $0 = true }
        wakeup.signal()
    }

    /// Waits, off Swift's cooperative threads, until the thread has ended.
    func join() async {
        let finished = self.finished
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                finished.wait()
                finished.signal()   // later joins return at once too
                continuation.resume()
            }
        }
    }
}
