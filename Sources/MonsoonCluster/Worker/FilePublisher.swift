import FoundationEssentials
import Glibc
import MonsoonEngine

/// Puts a finished file under its archive name: never through a link below the worker's folder,
/// never over anything but a regular file, and durably (the folder is flushed after the name is
/// taken, and a folder made for it in its parent; the file was flushed by the engine before).
///
/// The name is the episode's alone (names are unique per feed, folders per feed), and it is
/// published only while its job is locked as the worker's (`JobQueue.completeHolding`): a regular
/// file already there is this episode's, left by an earlier holder that lost its lease before
/// recording it. The same bytes are kept; other bytes (a server that inserts other ads at each
/// download) are replaced by these, which the ledger is about to record, unless the ledger
/// records them for another job.
enum FilePublisher {
    enum Outcome: Equatable {
        case published
        /// The name held these bytes already: the new copy is dropped.
        case alreadyThere
        /// The name held other bytes of the episode, unrecorded: replaced.
        case replaced
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Moves `file` (its SHA-256 `sha256`) to `relativePath` under `root`.
    /// - Parameter mayReplace: asked before other bytes already there are replaced: false leaves
    ///   them (another job's, recorded in the ledger), and the publishing fails.
    static func publish(_ file: String, to relativePath: String, under root: String, sha256: String, mayReplace: () -> Bool) throws -> Outcome {
        let target = root + "/" + relativePath
        let folder = target.parentPath
        let name = target.fileName
        let created = !FileManager.default.fileExists(atPath: folder)
        let folderFD = try ConfinedFolder.open(folder, root: root, create: true)
        defer { close(folderFD) }
        if created { try flushParent(of: folder, root: root) }
        // A hard link takes the name only if it is free; then the work name goes.
        if linkat(AT_FDCWD, file, folderFD, name, 0) == 0 {
            unlink(file)
            try flush(folderFD, folder)
            return .published
        }
        let linkError = errno
        // Put in place by an earlier try whose commit failed (the database went away): its work
        // name went then. The file there is this download's only if its bytes are.
        if linkError == ENOENT, access(file, F_OK) != 0, faccessat(folderFD, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 {
            guard try existingDigest(folderFD, name, target) == sha256 else { throw Failure(description: "its downloaded file is gone") }
            return .alreadyThere
        }
        guard linkError == EEXIST else { throw Failure(description: "cannot put the file at \(target): \(String(cString: strerror(linkError)))") }
        guard try existingDigest(folderFD, name, target) != sha256 else {
            unlink(file)
            return .alreadyThere
        }
        guard mayReplace() else {
            throw Failure(description: "\(target) holds another job's file, recorded in the ledger: it was left as it is")
        }
        guard renameat(AT_FDCWD, file, folderFD, name) == 0 else {
            throw Failure(description: "cannot put the file at \(target): \(String(cString: strerror(errno)))")
        }
        try flush(folderFD, folder)
        return .replaced
    }

    /// The SHA-256 of the regular file `name` in the folder; anything else there (a link, a
    /// folder, a FIFO that would never end) is refused and left as it is.
    private static func existingDigest(_ folderFD: Int32, _ name: String, _ target: String) throws -> String {
        let fd = openat(folderFD, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            throw Failure(description: "\(target) is in the way (\(String(cString: strerror(errno)))): it was left as it is; move it away, then retry the job")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw Failure(description: "\(target) is in the way and is not a regular file: it was left as it is; move it away, then retry the job")
        }
        do {
            // Through the descriptor checked above, never the name (which could change meanwhile).
            return try FileDigest.sha256(ofFile: "/proc/self/fd/\(fd)")
        } catch {
            throw Failure(description: "cannot read \(target): \(error.message)")
        }
    }

    private static func flush(_ fd: Int32, _ folder: String) throws {
        guard fsync(fd) == 0 else { throw Failure(description: "cannot flush the folder \(folder): \(String(cString: strerror(errno)))") }
    }

    /// Flushes the parent of a folder just made, so the folder (and the file in it) survive a
    /// power cut once the ledger says the file is there.
    private static func flushParent(of folder: String, root: String) throws {
        let parent = folder.parentPath
        let fd = try ConfinedFolder.open(parent, root: root, create: false)
        defer { close(fd) }
        try flush(fd, parent)
    }
}
