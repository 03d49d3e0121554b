import CCurl
import FoundationEssentials
import Glibc

/// The `<name>.part` file a download writes into before it is placed.
///
/// The resume state (URL and validators) is kept in an extended attribute of the
/// part itself, so the bytes and what they belong to can never be separated: a
/// later run, even another process, resumes only a part whose origin it knows.
package enum PartFile {
    package static let suffix = ".part"
    private static let attribute = "user.monsoon.resume"

    package static func path(for destination: String) -> String { destination + suffix }

    /// Takes over, as the part of `newDestination`, the part another holder of the same download
    /// left for `oldDestination` (a queue shared by machines: a job claimed again under a new
    /// lease), with its resume state: the engine then resumes it if the server still has the same
    /// file (If-Range). The bytes are copied into a new file: the old holder, if it only seemed
    /// dead (paused past its lease), may still write into its own, which is unlinked and harms
    /// nothing. Both are in `folder`, reached from `root` without following a link.
    /// - Returns: the bytes taken over (0: there was no such part, or it could not be copied).
    package static func adopt(from oldDestination: String, to newDestination: String, root: String) -> Int {
        guard let folder = try? ConfinedFolder.open(newDestination.parentPath, root: root, create: false) else { return 0 }   // no work folder: no part
        defer { close(folder) }
        let old = path(for: oldDestination).fileName
        let taken = old + ".adopting"
        // One taker only: the rename is atomic, a second one finds nothing.
        guard renameat(folder, old, folder, taken) == 0 else { return 0 }
        defer { unlinkat(folder, taken, 0) }
        let source = openat(folder, taken, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard source >= 0 else { return 0 }
        defer { close(source) }
        let state = readState(at: newDestination.parentPath + "/" + taken)
        let target = openat(folder, path(for: newDestination).fileName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard state != nil, target >= 0 else { if target >= 0 { close(target) }; return 0 }
        defer { close(target) }
        var copied = 0
        while true {
            let sent = sendfile(target, source, nil, 1 << 24)
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { break }
            copied += sent
        }
        if let state { writeState(state, fd: target) }
        // The head a run with --warc kept goes with the bytes it announced.
        var head = [UInt8](repeating: 0, count: WARCHeadAttribute.maxBytes)
        let length = monsoon_fgetxattr(source, WARCHeadAttribute.name, &head, head.count)
        if length > 0 { writeWARCHead(Array(head[..<Int(length)]), fd: target) }
        return copied
    }

    /// Held while a part is created or renamed into place. The disk worker creates parts while
    /// the placer renames finished ones, often in the same folder: the kernel then makes one
    /// spin on the folder's lock while the other allocates an inode (a fifth of the CPU time
    /// on thousands of small files). Taken here first, the waiter sleeps instead.
    static let folderChanges = Locked()

    /// The size of the regular file at `path`, or nil when there is none (a symbolic link there
    /// is no part of ours).
    static func size(at path: String) -> Int? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// Whether anything is at `path`: a file, a folder, a symbolic link (even a dangling one).
    /// A name taken by any of them is not one a download may take.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Opens (creating) the part for writing at `offset`, cutting anything past it. Its folders
    /// are reached from `root` without following a symbolic link (`ConfinedFolder`), and a link at
    /// the part's own path is refused: nothing planted there redirects the writes.
    /// - Returns: its descriptor, and whether the file was made now (then it is empty, with no
    ///   attributes of an earlier part to drop).
    static func open(_ path: String, at offset: Int, root: String?) throws(DownloadError) -> (fd: Int32, created: Bool) {
        let folder = try ConfinedFolder.open(path.parentPath, root: root, create: true)
        defer { close(folder) }
        let name = path.fileName
        if offset == 0 {
            // Most parts are new: made so, the file needs no cutting back or seeking.
            let fd = folderChanges.withLock { FileSystem.retrying { openat(folder, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644) } }
            if fd >= 0 { return (fd, true) }
            guard errno == EEXIST else { throw openError(path, folder: folder, name: name, root: root, code: errno) }
        }
        let fd = folderChanges.withLock { FileSystem.retrying { openat(folder, name, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644) } }
        guard fd >= 0 else { throw openError(path, folder: folder, name: name, root: root, code: errno) }
        if ftruncate(fd, off_t(offset)) != 0 || lseek(fd, off_t(offset), SEEK_SET) < 0 {
            let code = errno
            close(fd)
            throw FileSystem.error("cannot prepare \(path)", errno: code)
        }
        return (fd, false)
    }

    /// Why a part could not be opened: a link where it goes, or the system's error (`code`, read
    /// before the look at the name, which sets errno itself).
    private static func openError(_ path: String, folder: Int32, name: String, root: String?, code: Int32) -> DownloadError {
        if code == ELOOP || ConfinedFolder.isLink(folder, name) { return ConfinedFolder.linkError(path, root: root ?? path.parentPath) }
        return FileSystem.error("cannot create \(path)", errno: code)
    }

    /// Records what the part's bytes are, for a later resume. Best effort: on a
    /// file system without user attributes a later run restarts from zero instead.
    static func writeState(_ state: ResumeState, fd: Int32) {
        var text = "url=\(state.url)\n"
        if let etag = state.etag { text += "etag=\(etag)\n" }
        if let lastModified = state.lastModified { text += "lastModified=\(lastModified)\n" }
        if let total = state.total { text += "total=\(total)\n" }
        _ = text.withCString { monsoon_fsetxattr(fd, attribute, $0, strlen($0)) }
    }

    /// Keeps `head` with a part begun at byte 0 (`WARCHeadAttribute`), or drops the one an
    /// earlier part of that name had. Best effort, like `writeState`: a part without it is
    /// recorded as a `resource` when it is completed by a later run.
    static func writeWARCHead(_ head: [UInt8]?, fd: Int32) {
        if let head {
            _ = monsoon_fsetxattr(fd, WARCHeadAttribute.name, head, head.count)
        } else {
            _ = monsoon_fremovexattr(fd, WARCHeadAttribute.name)   // mostly there is none to remove
        }
    }

    static func readState(at path: String) -> ResumeState? {
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let length = monsoon_getxattr(path, attribute, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let text = String(decoding: buffer[..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var state = ResumeState(url: "")
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let value = String(line[line.index(after: equals)...])
            switch line[..<equals] {
            case "url": state.url = value
            case "etag": state.etag = value
            case "lastModified": state.lastModified = value
            case "total": state.total = Int(value)
            default: break
            }
        }
        return state.url.isEmpty ? nil : state
    }

    /// Says the part at `path` is `new`'s from now on, when it says it is `old`'s (a link renewed
    /// for the same resource: the validators stay, and decide at the next resume). Reached
    /// without following a link. Best effort, like `writeState`: a part whose attribute still
    /// names the old URL is only ever dropped, never spliced onto.
    static func relabel(_ path: String, from old: String, to new: String, root: String?) {
        guard var state = readState(at: path), state.url == old,
              // A folder gone or behind a link holds no part of ours to relabel.
              let folder = try? ConfinedFolder.open(path.parentPath, root: root, create: false) else { return }
        defer { close(folder) }
        let fd = FileSystem.retrying { openat(folder, path.fileName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { return }
        defer { close(fd) }
        state.url = new
        writeState(state, fd: fd)
    }

    /// The URL a part was fetched from, for finding a part whose name came from the server.
    static func origin(of path: String) -> String? { readState(at: path)?.url }

    /// Removes a part (or a finished file), its folder reached from `root` without following a link
    /// (`ConfinedFolder`): a podcast folder that is a link never leads a deletion out of the root.
    /// A failure is left for the next open to meet: `open(_:at:)` cuts whatever is there to the offset
    /// it starts from, and a part it cannot open fails that attempt.
    static func remove(_ path: String, root: String?) {
        // No folder to open (gone, or behind a link): nothing of ours to remove there.
        guard let folder = try? ConfinedFolder.open(path.parentPath, root: root, create: false) else { return }
        unlinkat(folder, path.fileName, 0)
        close(folder)
    }
}

/// Thin, EINTR-safe wrappers over the file-system calls the engine makes.
enum FileSystem {
    /// Writes `count` bytes at `data` to `fd` whole, across short writes and interruptions.
    /// - Returns: the bytes written, and the error that stopped it (nil: all were written).
    static func writeAll(_ fd: Int32, _ data: UnsafeRawPointer, _ count: Int) -> (written: Int, error: Int32?) {
        var written = 0
        while written < count {
            let result = write(fd, data + written, count - written)
            if result < 0 {
                if errno == EINTR { continue }
                return (written, errno)
            }
            written += result
        }
        return (written, nil)
    }

    static func retrying(_ call: () -> Int32) -> Int32 {
        var result: Int32
        repeat { result = call() } while result < 0 && errno == EINTR
        return result
    }

    static func error(_ what: String, errno code: Int32) -> DownloadError {
        switch code {
        case ENOSPC, EDQUOT:
            return DownloadError(.notEnoughDiskSpace, "not enough disk space (\(what)): free some space, then retry to resume")
        case EROFS:
            return DownloadError(.fileSystem, "\(what): the disk is mounted read-only; download to another folder (-o), or remount it read-write")
        case EACCES, EPERM:
            return DownloadError(.fileSystem, "\(what): permission denied; download to a folder you can write to (-o), or change its permissions")
        default:
            return DownloadError(.fileSystem, "\(what): \(String(cString: strerror(code)))")
        }
    }

    /// `mkdir -p` for the folder that holds `path`.
    static func createDirectories(forFile path: String) throws(DownloadError) {
        let folder = path.parentPath
        try createDirectories(folder)
    }

    static func createDirectories(_ folder: String) throws(DownloadError) {
        guard !folder.isEmpty else { return }
        var info = stat()
        if stat(folder, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw DownloadError(.fileSystem, "\(folder) exists and is not a folder")
        }
        try createDirectories(folder.parentPath)
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw error("cannot create the folder \(folder)", errno: errno)
        }
    }

    /// Bytes available to this user on the file system holding `folder`.
    static func freeSpace(at folder: String) -> Int? {
        var info = statvfs()
        guard statvfs(folder, &info) == 0 else { return nil }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// The nearest folder of `path` that exists (for the free-space check before it is created).
    static func nearestExistingFolder(_ path: String) -> String {
        var folder = path
        var info = stat()
        while !folder.isEmpty && folder != "/" && stat(folder, &info) != 0 {
            folder = folder.parentPath
        }
        return folder.isEmpty ? "." : folder
    }

    /// Flushes a folder's entries (a rename in it) to disk.
    static func syncDirectory(_ folder: String) throws(DownloadError) {
        let path = folder.isEmpty ? "." : folder
        let fd = retrying { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw error("cannot open the folder \(path) to flush it", errno: errno) }
        defer { close(fd) }
        if fsync(fd) != 0 { throw error("cannot flush the folder \(path)", errno: errno) }
    }
}

/// Part files left in a folder by an earlier run, so it can be resumed.
public enum PartialDownloads {
    /// The part files in `folder` whose origin is known: the URL each was fetched
    /// from, mapped to the destination it was headed for (the part's path without `.part`).
    public static func find(in folder: String) -> [String: String] {
        // A folder that cannot be listed holds no part this can offer; downloading into it
        // then fails with the file system's own reason.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [:] }
        var found: [String: String] = [:]
        for name in names where name.hasSuffix(PartFile.suffix) && name.count > PartFile.suffix.count {
            let path = folder.joiningPath(name)
            guard let origin = PartFile.origin(of: path) else { continue }
            found[origin] = String(path.dropLast(PartFile.suffix.count))
        }
        return found
    }
}
