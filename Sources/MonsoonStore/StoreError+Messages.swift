import CSQLite
import FoundationEssentials
import Glibc
import MonsoonBasics

extension StoreError {
    /// The error for a call on the database at `path` that failed with SQLite's (extended) `code`,
    /// SQLite's explanation `reason` and the system's `systemErrno`: what happened, in words a user can
    /// act on. `statement` is kept for developers, out of the message.
    static func failure(code: Int32, reason: String, systemErrno: Int32, path: String, statement: String?) -> StoreError {
        let database = path == ":memory:" || path.isEmpty ? "the in-memory database" : "the database \(path)"
        let reason = reason.split(whereSeparator: \.isNewline).joined(separator: " ")
        let system = systemErrno > 0 ? ": \(String(cString: strerror(systemErrno)))" : ""
        let message: String
        var code = code
        switch code & 0xFF {
        case SQLITE_FULL:
            message = "the disk holding \(database) is full (\(reason)); free some space and try again"
        case SQLITE_IOERR where systemErrno == ENOSPC || systemErrno == EDQUOT:
            // SQLite says "disk I/O error" when it could not grow the WAL index: only errno tells.
            code = SQLITE_FULL
            message = "the disk holding \(database) is full (\(reason)\(system)); free some space and try again"
        case SQLITE_READONLY:
            let (why, fix) = readOnly(path: path, reason: reason)
            message = "\(database) is read-only (\(why)), so nothing was saved; \(fix)"
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            message = "\(database) is damaged (\(reason)); it was left as it is: restore it from a backup, or move it away to start afresh"
        case SQLITE_IOERR:
            message = "\(database) could not be read or written (\(reason)\(system)); check the disk and try again"
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_PROTOCOL:
            message = "\(database) is busy: another process kept it locked too long (\(reason)); try again"
        case SQLITE_CANTOPEN:
            message = "cannot open \(database) (\(reason)\(system)); check that it and its folder exist and can be read and written"
        case SQLITE_PERM, SQLITE_AUTH:
            message = "\(database) cannot be used: permission denied (\(reason)\(system))"
        case SQLITE_NOMEM:
            message = "out of memory while using \(database); close other programs and try again"
        case SQLITE_CONSTRAINT:
            message = "\(database) refused a change that conflicts with what it holds (\(reason))"
        default:
            message = "\(database) failed unexpectedly (\(reason), SQLite error \(code)); please report this"
        }
        return StoreError(code: code, message: message, reason: reason, statement: statement)
    }

    /// Why the database at `path` cannot be written, and what to do, from what the system says of its file and folder.
    static func readOnly(path: String, reason: String) -> (why: String, fix: String) {
        let folder = path.parentPath.isEmpty ? "." : path.parentPath
        // errno is the file's when the file is refused, else the folder's.
        let fileRefused = access(path, W_OK) != 0
        guard fileRefused || access(folder, W_OK) != 0 else { return (reason, "make it and its folder writable and try again") }
        switch errno {
        case EROFS:
            return ("its file system is mounted read-only", "remount it read-write, or move the database where it can be written")
        case EACCES, EPERM:
            return fileRefused ? ("its file is not writable", "make it writable (chmod u+w \(path.shellQuoted)) and try again")
                : ("its folder is not writable, and SQLite keeps its journal next to it", "make the folder writable (chmod u+w \(folder.shellQuoted)) and try again")
        case ENOENT where fileRefused:
            return ("its file was moved or deleted while in use", "try again")
        default:
            return (reason, "make it and its folder writable and try again")
        }
    }
}
