import FoundationEssentials
import Glibc
import MonsoonEngine

/// The `.info.json` beside a downloaded file (`--write-info-json`).
///
/// Named after the file's whole name (`Episode 1.mp3.info.json`): two files of one folder never share a sidecar, and
/// the name is already sanitized and confined. Past the 255 bytes a file system allows, the file's name is cut (at a
/// whole character) to 236 bytes and followed by `~` and eight hex digits of a hash of the whole name
/// (`<first 236 bytes>~1f2e3d4c.info.json`). ``path(for:)`` is the one place that rule lives.
///
/// Written as the media files are placed: a temporary file in the same folder, flushed, renamed over the sidecar, then
/// the folder flushed; the folder is reached from the download's root without following a link, and a link at the
/// sidecar's name is refused.
public enum InfoSidecar {
    public static let suffix = ".info.json"
    /// NAME_MAX.
    static let nameLimit = 255

    public static func path(for file: String) -> String {
        let name = file.fileName
        guard name.utf8.count + suffix.utf8.count > nameLimit else { return file + suffix }
        let folder = file.parentPath
        return (folder.isEmpty || folder.hasSuffix("/") ? folder : folder + "/") + shortName(name) + suffix
    }

    /// `name` cut to whole characters within 236 bytes, then `~` and its hash (9 bytes).
    static func shortName(_ name: String) -> String {
        let room = nameLimit - suffix.utf8.count - 9
        var stem = ""
        var bytes = 0
        for scalar in name.unicodeScalars {
            let length = String(scalar).utf8.count
            if bytes + length > room { break }
            stem.unicodeScalars.append(scalar)
            bytes += length
        }
        // FNV-1a (32 bits) of the whole name: stable across runs and builds, unlike `hashValue`.
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let hex = String(hash, radix: 16)
        return stem + "~" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// Atomically and durably.
    /// - Parameters:
    ///   - root: the download's root (`DownloadRequest.root`): no link below it is followed.
    ///   - isPrivate: 0600 whatever the umask: a private feed's URLs are redacted, but its titles and notes are the
    ///     subscriber's alone.
    public static func write(_ data: Data, besideFile file: String, root: String?, isPrivate: Bool = false) throws(EpisodeFileError) {
        let path = path(for: file)
        let name = path.fileName
        let folder: Int32
        do { folder = try ConfinedFolder.open(file.parentPath, root: root, create: false) } catch {
            throw EpisodeFileError(.fileSystem, "cannot write \(path): \(error.message)")
        }
        defer { close(folder) }
        var info = stat()
        if fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFLNK {
            throw EpisodeFileError(.fileSystem, "\(path) is a symbolic link, and Monsoon never writes through one: remove it, then run again")
        }
        // Short whatever the file's name is (a long one has no room for more).
        let temporary = ".monsoon-info.\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let mode: mode_t = isPrivate ? 0o600 : 0o644
        let fd = openat(folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw AtomicFile.failure(path, errno) }
        // A private file is private whatever the umask (as `AtomicFile` does).
        var code = isPrivate && fchmod(fd, mode) != 0 ? errno : nil
        if code == nil { code = AtomicFile.writeAndFlush(data, to: fd) }
        close(fd)
        if code == nil && renameat(folder, temporary, folder, name) != 0 { code = errno }
        if let code {
            // Best effort: the temporary file may not exist (openat's failure came first); the write's error is the one said.
            unlinkat(folder, temporary, 0)
            throw AtomicFile.failure(path, code)
        }
        // The rename survives a power cut once the folder is flushed, as for the media files.
        if fsync(folder) != 0 { throw AtomicFile.failure(path, errno) }
    }

    /// For a file deleted on purpose (`delete`, `--versions latest`), also from its folder's manifest. A link at its name
    /// is not ours: left alone.
    /// - Returns: what went wrong, as a warning to print.
    public static func delete(besideFile file: String) -> String? {
        let sidecar = path(for: file)
        guard !LocalFile.isLink(sidecar), LocalFile.size(at: sidecar) != nil else { return nil }
        guard unlink(sidecar) == 0 || errno == ENOENT else {
            return "cannot delete \(sidecar), the metadata of a deleted file: \(String(cString: strerror(errno))); delete it yourself"
        }
        do { try Manifest.forget(fileAt: sidecar) } catch {
            return "\(sidecar) was deleted, but the manifest in its folder could not be updated: \(error)"
        }
        return nil
    }
}
