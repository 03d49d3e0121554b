import FoundationEssentials
import Glibc

/// Facts about files on disk that every layer asks for.
public enum LocalFile {
    /// The size of the regular file at `path`; nil when there is none (missing, a folder, a device).
    public static func size(at path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// Why a file at `path` cannot be kept track of, or nil when it can: its part's path (the
    /// longer one) must be shorter than the system's limit on a path (PATH_MAX, 4,096 bytes with
    /// its end), or the file, once written, could no longer be opened, listed or deleted by name.
    public static func lengthRefusal(of path: String) -> String? {
        let length = path.utf8.count + PartFile.suffix.utf8.count
        guard length >= Int(PATH_MAX) else { return nil }
        return "the file's path would be \(length) bytes long, longer than the system allows (\(Int(PATH_MAX) - 1)): "
            + "download into a folder with a shorter path (-o), or choose shorter names"
    }

    /// The first symbolic link on the way from `root` down to `path` (`path` itself included),
    /// or nil when there is none: what Monsoon must not write through, nor read through when it
    /// checks an archive. The root itself may be a link. Parts of `path` that do not exist yet
    /// are no link.
    public static func firstLink(below root: String, in path: String) -> String? {
        guard ConfinedFolder.isInside(path, root) else { return isLink(path) ? path : nil }
        var current = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
        for component in path.dropFirst(current.count).split(separator: "/") {
            current = current.joiningPath(String(component))
            if isLink(current) { return current }
        }
        return nil
    }

    /// Whether `path` is a symbolic link (not what it points to).
    public static func isLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }
}
