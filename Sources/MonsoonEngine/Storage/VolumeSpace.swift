import Foundation

/// The file system a folder is on and its free space, as `statvfs` tells: measured off the
/// transfer thread (a `statvfs` on a network file system can wait), used on it.
struct VolumeSpace: Sendable, Equatable {
    /// The file system's id (`f_fsid`): folders on one file system share one allowance.
    var volume: UInt64
    /// Bytes available to this user.
    var free: Int
    /// Mounted read-only: nothing can be written there, whatever `free` says (a read-only image
    /// reports none free, which is no reason to wait for room).
    var readOnly = false

    /// The file system holding `folder`, or the nearest folder above it that exists (a
    /// download's folder is made when its first byte arrives); nil when it cannot be measured.
    static func measure(_ folder: String) -> VolumeSpace? {
        var info = statvfs()
        guard statvfs(FileSystem.nearestExistingFolder(folder.isEmpty ? "." : folder), &info) == 0 else { return nil }
        return VolumeSpace(volume: UInt64(info.f_fsid), free: Int(info.f_bavail) * Int(info.f_frsize),
                           readOnly: info.f_flag & UInt(ST_RDONLY) != 0)
    }
}
