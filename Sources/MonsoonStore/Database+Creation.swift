import CSQLite
import FoundationEssentials
import Glibc

extension Database {
    /// The code of `emptyFile`: `SQLITE_NOTADB`, so ``StoreError/isCorrupt`` holds.
    static let emptyFileCode = SQLITE_NOTADB

    /// Makes sure a database file is at `path` before SQLite opens it: refuses an empty one, and
    /// creates a missing one whole.
    ///
    /// SQLite takes an empty file for a new, empty database, so a `monsoon.sqlite` truncated to 0
    /// bytes (a crash of the file system, a mistaken `>`) would silently become an empty library,
    /// written over at the first change. Monsoon never leaves an empty database behind, so an empty
    /// file at `path` is damage, reported and left untouched.
    static func prepareFile(at path: String) throws(StoreError) {
        var status = stat()
        if stat(path, &status) == 0 { return try refuseUnusable(status, at: path) }
        guard errno == ENOENT else { throw cannotCreate(path, errno) }
        try createFile(at: path)
    }

    /// Refuses what is at `path` (its `stat` is `status`) when it cannot be a database: a folder, or
    /// an empty file, whose contents were lost (see `prepareFile(at:)`).
    static func refuseUnusable(_ status: stat, at path: String) throws(StoreError) {
        if status.st_mode & S_IFMT == S_IFDIR {
            throw StoreError(code: SQLITE_CANTOPEN, message: "cannot open the database \(path): it is a folder; move it away or choose another place")
        }
        if status.st_mode & S_IFMT == S_IFREG && status.st_size == 0 {
            throw StoreError(code: emptyFileCode, message: "the database \(path) is damaged (0 bytes: its contents are gone); it was left untouched; "
                             + "restore it from a backup, or move it away to start afresh with an empty one")
        }
    }

    /// Creates the database file at `path`, never empty, even when the process is killed at any moment.
    ///
    /// The file is made under a temporary name in the same folder (mode 0600: it will hold feed
    /// credentials), switched to WAL mode (which writes SQLite's header, the first page), closed and
    /// flushed, and only then linked to its name with `link(2)`, which fails rather than replaces: when
    /// another process starting at the same moment linked its own first (`EEXIST`), that one is used.
    /// The temporary name is removed either way; one left by a process killed meanwhile is removed
    /// by the next creation in the folder.
    static func createFile(at path: String) throws(StoreError) {
        let folder = path.parentPath.isEmpty ? "." : path.parentPath
        let prefix = "." + path.fileName + ".creating-"
        removeAbandoned(in: folder, prefix: prefix)
        let temporary = folder.joiningPath(prefix + "\(getpid())-\(UInt64.random(in: 0 ... .max))")
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw cannotCreate(path, errno) }
        close(descriptor)
        defer { removeFiles(of: temporary) }

        var handle: OpaquePointer?
        var code = sqlite3_open_v2(temporary, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nil)
        var mode: String?
        var failing = "PRAGMA synchronous = OFF"   // the statement a failure names
        if code == SQLITE_OK, let handle {
            // No flush of SQLite's own while the file has no name (its journal, the folder, the file
            // in turn: four, each a wait on a disk): nobody else can open it, a crash leaves only a
            // temporary, and the one flush below makes it whole before it is named.
            code = sqlite3_exec(handle, failing, nil, nil, nil)
        }
        if code == SQLITE_OK, let handle {
            failing = "PRAGMA journal_mode = WAL"
            var statement: OpaquePointer?
            code = sqlite3_prepare_v2(handle, failing, -1, &statement, nil)
            if code == SQLITE_OK, sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) {
                mode = String(cString: text)
            } else if code == SQLITE_OK {
                code = sqlite3_extended_errcode(handle)
            }
            sqlite3_finalize(statement)
        }
        let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        let system = handle.map { sqlite3_system_errno($0) } ?? 0
        // Closing the last connection checkpoints and removes the temporary's -wal and -shm files.
        sqlite3_close_v2(handle)
        guard mode?.lowercased() == "wal" else {
            if code != SQLITE_OK {
                throw StoreError.failure(code: code, reason: reason, systemErrno: system, path: path, statement: failing)
            }
            throw StoreError(code: SQLITE_ERROR, message: "cannot use write-ahead logging for \(path) (journal mode \(mode ?? "unknown"))")
        }
        // Flushed before it gets its name: after a power cut, the name never points at an empty file.
        let flush = open(temporary, O_RDONLY | O_CLOEXEC)
        guard flush >= 0, fsync(flush) == 0 else {
            let failure = errno
            if flush >= 0 { close(flush) }
            throw cannotCreate(path, failure)
        }
        close(flush)

        if link(temporary, path) != 0 {
            switch errno {
            case EEXIST:
                return   // another process created it at the same moment: use theirs
            case EPERM, EOPNOTSUPP, ENOSYS:
                // A file system without hard links (FAT, some network ones): a rename, when the name is
                // still free. Two processes creating the database at the same moment there may both rename.
                guard access(path, F_OK) != 0 else { return }
                guard rename(temporary, path) == 0 else { throw cannotCreate(path, errno) }
            default:
                throw cannotCreate(path, errno)
            }
        }
        // The new name itself, durable.
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)   // at worst the name is lost in a power cut, and the next run creates the file again
            close(directory)
        }
    }

    /// Removes temporaries that processes no longer running left in `folder` (killed while creating).
    private static func removeAbandoned(in folder: String, prefix: String) {
        // A folder that cannot be listed has nothing to clean up that this process could remove.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        // PREFIX PID-RANDOM, and SQLite's PREFIX PID-RANDOM-wal and -shm next to it.
        for name in names where name.hasPrefix(prefix) {
            let parts = name.dropFirst(prefix.count).split(separator: "-", maxSplits: 2)
            guard parts.count >= 2, let pid = Int32(parts[0]), pid > 0, kill(pid, 0) != 0, errno == ESRCH else { continue }
            removeFiles(of: folder.joiningPath(prefix + parts[0] + "-" + parts[1]))
        }
    }

    /// Unlinks a temporary database and whatever SQLite may have left next to it.
    private static func removeFiles(of path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    private static func cannotCreate(_ path: String, _ code: Int32) -> StoreError {
        StoreError(code: SQLITE_CANTOPEN, message: "cannot create the database \(path): \(String(cString: strerror(code))); check that its folder exists and can be written")
    }
}
