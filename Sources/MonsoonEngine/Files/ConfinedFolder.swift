import FoundationEssentials
import Glibc

/// A download's folder opened from its root down, one `openat` at a time, never through a
/// symbolic link: a podcast folder that is a link to elsewhere must not carry an archive's files
/// out of it. The root itself may be a link (`~/Podcasts` on another disk, say).
///
/// The file's own name and its part's are then reached from the folder's descriptor with
/// `O_NOFOLLOW` and the `*at` calls, so no link at any step below the root is followed.
package enum ConfinedFolder {
    /// Opens `folder` (read-only, a directory), creating what is missing when `create`, going down
    /// from `root` (nil, or not above `folder`: from `folder` itself) without following a link.
    /// - Returns: the folder's descriptor; the caller closes it.
    package static func open(_ folder: String, root: String?, create: Bool) throws(DownloadError) -> Int32 {
        let folder = folder.isEmpty ? "." : folder
        // Fails closed: a folder that is not below its root, or climbs with `..`, is never opened.
        if let root, !Self.isInside(folder, root) {
            throw DownloadError(.fileSystem, "\(folder) is not inside \(root), where this download must stay")
        }
        let base = root ?? folder
        if folder.dropFirst(base.count).split(separator: "/").contains("..") {
            throw DownloadError(.fileSystem, "\(folder) climbs out of \(base) with '..', where this download must stay")
        }
        if create { try FileSystem.createDirectories(base) }
        var fd = FileSystem.retrying { Glibc.open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw FileSystem.error("cannot open the folder \(base)", errno: errno) }
        var path = base
        for component in folder.dropFirst(base.count).split(separator: "/") where component != "." {
            path = path.joiningPath(String(component))
            var next = FileSystem.retrying { openat(fd, String(component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            if next < 0 && errno == ENOENT && create {
                if mkdirat(fd, String(component), 0o755) != 0 && errno != EEXIST {
                    let code = errno
                    close(fd)
                    throw FileSystem.error("cannot create the folder \(path)", errno: code)
                }
                next = FileSystem.retrying { openat(fd, String(component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            }
            let code = errno
            if next < 0 {
                let isLink = Self.isLink(fd, String(component))
                close(fd)
                if isLink { throw linkError(path, root: base) }
                if code == ENOTDIR { throw DownloadError(.fileSystem, "\(path) exists and is not a folder") }
                throw FileSystem.error("cannot open the folder \(path)", errno: code)
            }
            close(fd)
            fd = next
        }
        return fd
    }

    /// Whether `name` in the folder `fd` is a symbolic link.
    static func isLink(_ fd: Int32, _ name: String) -> Bool {
        var info = stat()
        return fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    /// What a link where Monsoon writes is told as.
    static func linkError(_ path: String, root: String) -> DownloadError {
        DownloadError(.fileSystem, "\(path) is a symbolic link, and Monsoon never writes through one inside \(root): "
                      + "replace it with a real folder or file (or remove it), then retry")
    }

    /// `folder` is `root` or below it (compared as written: the paths the engine is given are absolute).
    static func isInside(_ folder: String, _ root: String) -> Bool {
        let root = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
        return folder == root || folder.hasPrefix(root == "/" ? "/" : root + "/")
    }
}
