import CCrypto
import CCurl
import FoundationEssentials
import Glibc

/// A download whose whole body came while its part would have been prepared (a small file):
/// the disk worker writes it in one pass, with no part. It writes the bytes into an unnamed
/// file in the folder, flushes it, gives it a free name there (never over another file), flushes
/// the folder, and saves the row as completed, in that order and in one transaction with the
/// run's other rows. The name never stands in a row before the file is whole in place, and a
/// run killed on the way leaves no file behind; so it needs no resume state either.
///
/// Against the part's way, that saves a row write naming the part, the part's attribute, the
/// placer's round trip and the completion's own commit: most of what a small file cost.
///
/// A class: the disk worker's run passes it through a dozen hands (its work item, the run's
/// list, the link, the answer), and each copy of a value this size retained some twenty strings.
final class WholeFile: Sendable {
    /// The name to choose, the space to check, the download and attempt (a part's, unsent).
    let preparation: BodyPreparation
    let body: Body
    let lastModified: Date?
    /// The volume whose allowance the body spent (`Volume.id`), given back if it is not written.
    let volume: UInt64?
    /// The row as it is once the file is in place, less its path (nil: no store to save it in).
    let completedRow: DownloadRecord?

    init(preparation: BodyPreparation, body: Body, lastModified: Date?, volume: UInt64?, completedRow: DownloadRecord?) {
        self.preparation = preparation
        self.body = body
        self.lastModified = lastModified
        self.volume = volume
        self.completedRow = completedRow
    }

    /// The body, in the loop's buffer: lent to the worker, whose answer gives it back; only the
    /// loop frees it (its memory is charged to the loop's `EarlyBudget` until then).
    struct Body: @unchecked Sendable {
        // Safe: the loop does not touch the buffer from the moment it hands it over until the
        // worker's answer comes back with it; the worker only reads it in between.
        let buffer: UnsafeMutableRawBufferPointer
        let count: Int
    }

    /// Which download of which queue the file is (`tag`): a digest of the queue's identity (a random
    /// one kept in its `meta`), the download's id and its row's sequence. Ids and sequences start
    /// over in another database; the queue's identity does not repeat.
    func owner(queue: String) -> String {
        guard let context = monsoon_sha256_new() else { return "" }
        defer { monsoon_digest_free(context) }
        let text = "\(queue)\n\(preparation.row.request.id.rawValue)\n\(preparation.row.sequence)"
        text.utf8CString.withUnsafeBufferPointer { monsoon_digest_update(context, $0.baseAddress, $0.count - 1) }
        return FileDigest.hex(finishing: context)
    }

    private static let ownerAttribute = "user.monsoon.download"
    /// The meta key of a queue's identity.
    static let queueIdentityKey = "queue_identity"

    /// Marks the file as the download's, so that a run killed after naming it but before saving its
    /// row finds it its own when it names the file again, instead of a duplicate "name (2)". Best
    /// effort: without user attributes such a run makes the duplicate.
    static func tag(_ fd: Int32, _ owner: String) {
        guard !owner.isEmpty else { return }
        _ = owner.withCString { monsoon_fsetxattr(fd, ownerAttribute, $0, strlen($0)) }
    }

    /// The file `name` in the folder `folder` when it is a regular file tagged as `owner`'s (never
    /// through a link): its device and inode, to make sure it is still the one replaced.
    static func tagged(_ folder: Int32, _ name: String, _ owner: String) -> (device: UInt, inode: UInt)? {
        guard !owner.isEmpty else { return nil }
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        var buffer = [UInt8](repeating: 0, count: 80)   // a SHA-256 in hex is 64
        let length = monsoon_fgetxattr(fd, ownerAttribute, &buffer, buffer.count)
        guard length > 0, Array(buffer[..<Int(length)]) == Array(owner.utf8) else { return nil }
        return (UInt(info.st_dev), UInt(info.st_ino))
    }

    /// Whether this process can name an unnamed file (it does so through /proc when the kernel
    /// will not by descriptor, and a sandbox may have no /proc): where it cannot, whole files go
    /// through a part.
    static let canNameUnnamedFiles = access("/proc/self/fd", X_OK) == 0

    /// A new unnamed file in `folder`, for writing (-1 with `errno` where the file system has none).
    static func openUnnamed(in folder: Int32) -> Int32 {
        monsoon_open_tmpfile(folder, 0o644)
    }

    /// Whether unnamed files are named through /proc: once the kernel refuses a link by
    /// descriptor (before Linux 6.10, without a capability), it is not asked again.
    private static let namesThroughProc = Locked(false)

    /// Gives the unnamed file `fd` the name `name` in `folder`, never over another file (-1 with
    /// `EEXIST` when the name is taken, as `linkat`): by descriptor where the kernel allows it
    /// (no walk of /proc's path), else through /proc (`throughProc` forces it).
    static func name(_ fd: Int32, in folder: Int32, as name: String, throughProc: Bool = false) -> Int32 {
        guard !throughProc, !namesThroughProc.withLock({ $0 }) else { return monsoon_link_tmpfile(fd, folder, name, 1) }
        if monsoon_link_tmpfile(fd, folder, name, 0) == 0 { return 0 }
        guard errno == ENOENT else { return -1 }
        // The kernel's refusal, or a folder removed meanwhile: only a link through /proc that
        // does not say ENOENT again tells the refusal.
        let linked = monsoon_link_tmpfile(fd, folder, name, 1)
        let error = errno
        if linked == 0 || error != ENOENT { namesThroughProc.withLock { $0 = true } }
        errno = error
        return linked
    }

    /// What the worker did with it.
    struct Answer: Sendable {
        var id: DownloadID
        var sequence: Int
        /// The name it has in place (or, without a way to write an unnamed file, the name its part took).
        var path: String?
        var result: Result<Void, DownloadError>
        /// The row was saved as completed with the path, in the same transaction.
        var rowSaved: Bool
        /// The failure was the database's (busy, say): the download is tried again.
        var transient: Bool
        var volume: UInt64?
        var body: Body
    }
}
