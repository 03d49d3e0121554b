import CCurl
import Foundation

/// A download whose whole body came while its part would have been prepared (a small file):
/// the disk worker writes it in one pass, with no part. It writes the bytes into an unnamed
/// file in the folder, flushes it, gives it a free name there (never over another file), flushes
/// the folder, and saves the row as completed, in that order and in one transaction with the
/// run's other rows. The name never stands in a row before the file is whole in place, and a
/// run killed on the way leaves no file behind; so it needs no resume state either.
///
/// Against the part's way, that saves a row write naming the part, the part's attribute, the
/// placer's round trip and the completion's own commit: most of what a small file cost.
struct WholeFile: Sendable {
    /// The name to choose, the space to check, the download and attempt (a part's, unsent).
    var preparation: BodyPreparation
    var body: Body
    var lastModified: Date?
    /// The row as it is once the file is in place, less its path (nil: no store to save it in).
    var completedRow: DownloadRecord?

    /// The body, in the loop's buffer: lent to the worker, whose answer gives it back; only the
    /// loop frees it (its memory is charged to the loop's `EarlyBudget` until then).
    struct Body: @unchecked Sendable {
        // Safe: the loop does not touch the buffer from the moment it hands it over until the
        // worker's answer comes back with it; the worker only reads it in between.
        let buffer: UnsafeMutableRawBufferPointer
        let count: Int
    }

    /// Which download the file is (`tag`): its id and row sequence.
    var owner: String { "\(preparation.row.request.id.rawValue) \(preparation.row.sequence)" }

    private static let ownerAttribute = "user.monsoon.download"

    /// Marks the file as the download's, so that a run killed after naming it but before saving its
    /// row finds it its own when it names the file again, instead of a duplicate "name (2)". Best
    /// effort: without user attributes such a run makes the duplicate.
    static func tag(_ fd: Int32, _ owner: String) {
        _ = owner.withCString { monsoon_fsetxattr(fd, ownerAttribute, $0, strlen($0)) }
    }

    /// Whether `name` in the folder `folder` is a regular file tagged as `owner`'s (never through a link).
    static func isTagged(_ folder: Int32, _ name: String, _ owner: String) -> Bool {
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = monsoon_fgetxattr(fd, ownerAttribute, &buffer, buffer.count)
        return length > 0 && Array(buffer[..<Int(length)]) == Array(owner.utf8)
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
        var body: Body
    }
}
