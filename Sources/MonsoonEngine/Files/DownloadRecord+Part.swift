import FoundationEssentials
import Glibc

extension DownloadRecord {
    /// The record as its files on disk say it is: the bytes its part holds (cut back to the
    /// checkpoint after a reboot, when later bytes may be garbage), or completed when the
    /// file is in place whole. Reads the disk: never on the transfer thread once it runs.
    /// - Parameter problem: set when a part that had to be cut back could not be. The part is
    ///   then removed (the download starts over); if even that fails, the download fails with a
    ///   message naming the part (on such a file system its writes would fail as well).
    func inspectingPart(rebooted: Bool, problem: inout DownloadError?) -> DownloadRecord {
        var record = self
        if record.status == .downloading { record.move(.requeue, problem: &problem) }   // interrupted by a stop or a kill
        guard let path = record.filePath, record.status != .completed else { return record }
        let partPath = PartFile.path(for: path)
        if var size = PartFile.size(at: partPath) {
            if rebooted && size > record.checkpoint {
                if Self.cut(partPath, to: record.checkpoint, root: record.request.root) {
                    size = record.checkpoint
                } else {
                    // The bytes past the checkpoint cannot be trusted, and a resume would append
                    // to them.
                    let reason = String(cString: strerror(errno))
                    // The reset is saved durably (`persist`): a power cut must never pair a
                    // new part's bytes with the old, higher checkpoint.
                    if record.checkpoint > 0 { record.checkpointResetPending = true }
                    record.checkpoint = 0
                    record.resume = nil
                    size = 0
                    if Self.unlinkPart(partPath, root: record.request.root) {
                        problem = DownloadError(.fileSystem, "cannot cut \(partPath) back to its last flushed byte after the machine restarted (\(reason)); it was removed and \(record.request.id) starts over")
                    } else {
                        let error = DownloadError(.fileSystem, "cannot cut \(partPath) back to its last flushed byte after the machine restarted, nor remove it (\(reason)): its end may be garbage; delete it, then retry")
                        problem = error
                        if record.status != .failed { record.move(.fail, problem: &problem) }
                        record.lastError = error
                    }
                }
            }
            record.bytes = size
        } else if let total = record.total, PartFile.size(at: path) == total, record.status != .failed {
            // Stopped between the rename and saving the row: the file in place is whole
            // (it is renamed only after an fsync).
            record.move(.foundComplete, problem: &problem)
            record.bytes = total
        } else {
            record.bytes = 0
        }
        return record
    }

    /// Moves a record read from its row (no transfer runs for it): a refusal, a fault of this
    /// code, is `problem`, reported with the restore's (`persistenceError`).
    private mutating func move(_ event: DownloadLifecycle.Event, problem: inout DownloadError?) {
        if case .refuse(let reason) = handle(.lifecycle(event)) {
            problem = DownloadError(.engineFault, "internal error: \(reason) (download \(request.id), read from the queue)")
        }
    }

    /// Cuts the part at `path` back to `length`, never through a symbolic link (a link there is
    /// no part of ours, and its target must not be cut). On failure, `errno` says why.
    private static func cut(_ path: String, to length: Int, root: String?) -> Bool {
        // The error is the one errno carries below: the caller says why from it.
        guard let folder = try? ConfinedFolder.open(path.parentPath, root: root, create: false) else {
            errno = ELOOP   // behind a link (or gone): the caller says why from errno
            return false
        }
        defer { close(folder) }
        let fd = FileSystem.retrying { openat(folder, path.fileName, O_WRONLY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { return false }
        let cut = ftruncate(fd, off_t(length)) == 0
        let code = errno
        close(fd)
        errno = code   // the caller says why from it
        return cut
    }

    /// Removes the part at `path` without following a link on the way from `root`.
    private static func unlinkPart(_ path: String, root: String?) -> Bool {
        // A folder gone or behind a link holds no part of ours: false, and the caller says so.
        guard let folder = try? ConfinedFolder.open(path.parentPath, root: root, create: false) else { return false }
        defer { close(folder) }
        return unlinkat(folder, path.fileName, 0) == 0
    }
}
