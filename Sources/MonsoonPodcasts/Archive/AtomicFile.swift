import FoundationEssentials
import Glibc

/// A reader sees the old file or the new one, never half of either: a temporary file beside it, created with the final
/// mode from the start (a private feed copy is never readable by others, not even for a moment), then renamed over it.
public enum AtomicFile {
    /// 0o600 (credentials) is set whatever the umask; any other mode is narrowed by the umask.
    public static func write(_ data: Data, to path: String, mode: mode_t) throws(EpisodeFileError) {
        let folder = path.parentPath
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw EpisodeFileError(.fileSystem, "cannot create the folder \(folder) for \(path): it is not writable, or a file stands in its way")
        }
        let temporary = folder + "/." + path.fileName + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure(path, errno) }
        // A private file is private whatever the umask; any other keeps what the umask leaves.
        var code = mode & 0o077 == 0 && fchmod(fd, mode) != 0 ? errno : nil
        if code == nil { code = writeAndFlush(data, to: fd) }
        close(fd)
        if let code {
            unlink(temporary)
            throw failure(path, code)
        }
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            throw failure(path, code)
        }
    }

    /// Nil, or the `errno` of the failure.
    static func writeAndFlush(_ data: Data, to fd: Int32) -> Int32? {
        data.withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let result = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += result
            }
            return fsync(fd) == 0 ? nil : errno
        }
    }

    static func failure(_ path: String, _ code: Int32) -> EpisodeFileError {
        if code == ENOSPC || code == EDQUOT { return EpisodeFileError(.diskFull, "cannot write \(path): the disk is full; free some space, then run again") }
        return EpisodeFileError(.fileSystem, "cannot write \(path): \(String(cString: strerror(code)))")
    }
}
