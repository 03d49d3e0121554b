import CCurl
import Foundation

/// Moves a finished part file into place, off the transfer thread.
///
/// Order matters for durability: flush the file, rename it over the destination
/// (atomic: the destination never holds a partial file), then flush the folder
/// so the rename itself survives a power cut.
struct Placement: Sendable {
    var fd: Int32
    var partPath: String
    var destination: String
    var lastModified: Date?

    func perform() throws(DownloadError) {
        defer { close(fd) }
        if let lastModified {
            let seconds = lastModified.timeIntervalSince1970
            var times = [timespec](repeating: timespec(tv_sec: Int(seconds), tv_nsec: 0), count: 2)
            times[0].tv_nsec = monsoon_utime_omit()   // leave the access time
            futimens(fd, &times)
        }
        if fsync(fd) != 0 {
            throw FileSystem.error("cannot flush \(partPath)", errno: errno)
        }
        try FileSystem.createDirectories(forFile: destination)
        if rename(partPath, destination) != 0 {
            throw FileSystem.error("cannot move \(partPath) to \(destination)", errno: errno)
        }
        // Without this the rename may not survive a power cut: a failure fails the placement.
        try FileSystem.syncDirectory((destination as NSString).deletingLastPathComponent)
    }
}
