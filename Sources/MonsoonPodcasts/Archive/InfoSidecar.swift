import Foundation
import MonsoonEngine

/// The `.info.json` beside a downloaded file (`--write-info-json`).
///
/// Named after the file's whole name (`Episode 1.mp3.info.json`): two files of one folder never
/// share a sidecar, whatever their extensions, and the name comes from the file's, which is
/// already sanitized and confined. Written as the media files are placed: a temporary file in the
/// same folder, flushed, renamed over the sidecar, then the folder flushed; the folder is reached
/// from the download's root without following a link, and a link at the sidecar's name is refused.
public enum InfoSidecar {
    /// What follows a file's name in its sidecar's.
    public static let suffix = ".info.json"

    /// The sidecar's path for the file at `path`.
    public static func path(for file: String) -> String { file + suffix }

    /// Writes `data` as the sidecar of the file at `file`, atomically and durably.
    /// - Parameter root: the download's root (`DownloadRequest.root`): no link below it is followed.
    /// - Throws: `EpisodeFileError` saying which file and why.
    public static func write(_ data: Data, besideFile file: String, root: String?) throws(EpisodeFileError) {
        let path = path(for: file)
        let name = (path as NSString).lastPathComponent
        let folder: Int32
        do { folder = try ConfinedFolder.open((file as NSString).deletingLastPathComponent, root: root, create: false) } catch {
            throw EpisodeFileError(.fileSystem, "cannot write \(path): \(error.message)")
        }
        defer { close(folder) }
        var info = stat()
        if fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFLNK {
            throw EpisodeFileError(.fileSystem, "\(path) is a symbolic link, and Monsoon never writes through one: remove it, then run again")
        }
        let temporary = ".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = openat(folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw AtomicFile.failure(path, errno) }
        var code = AtomicFile.writeAndFlush(data, to: fd)
        close(fd)
        if code == nil && renameat(folder, temporary, folder, name) != 0 { code = errno }
        if let code {
            unlinkat(folder, temporary, 0)
            throw AtomicFile.failure(path, code)
        }
        // The rename survives a power cut once the folder is flushed, as for the media files.
        if fsync(folder) != 0 { throw AtomicFile.failure(path, errno) }
    }
}
