import Foundation

/// Facts about files on disk that every layer asks for.
public enum LocalFile {
    /// The size of the regular file at `path`; nil when there is none (missing, a folder, a device).
    public static func size(at path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }
}
