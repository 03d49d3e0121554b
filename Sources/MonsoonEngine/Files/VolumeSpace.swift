import FoundationEssentials
import Glibc

/// The file system a folder is on and its free space, as `statvfs` tells: measured off the
/// transfer thread (a `statvfs` on a network file system can wait), used on it.
struct VolumeSpace: Sendable, Equatable {
    /// The file system's device (`st_dev`): folders on one file system share one allowance.
    /// (`statvfs`'s `f_fsid` is 0 for FUSE and NFS mounts, which would make them all one.)
    var volume: UInt64
    /// Bytes available to this user.
    var free: Int
    /// Mounted read-only: nothing can be written there, whatever `free` says (a read-only image
    /// reports none free, which is no reason to wait for room).
    var readOnly = false

    /// The file system holding `folder`, or the nearest folder above it that exists (a
    /// download's folder is made when its first byte arrives); nil when it cannot be measured.
    static func measure(_ folder: String) -> VolumeSpace? {
        let existing = FileSystem.nearestExistingFolder(folder.isEmpty ? "." : folder)
        var info = statvfs()
        var device = stat()
        guard statvfs(existing, &info) == 0, stat(existing, &device) == 0 else { return nil }
        return VolumeSpace(volume: UInt64(device.st_dev), free: Int(info.f_bavail) * Int(info.f_frsize),
                           readOnly: info.f_flag & UInt(ST_RDONLY) != 0)
    }
}
