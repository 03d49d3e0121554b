import CSQLite
import FoundationEssentials
import Glibc

extension Database {
    /// Opens the database at `path` to read it only, changing nothing on disk: no log or lock file
    /// is created, and the `Migrator` only checks each schema (one this build would have to bring up
    /// to date fails with ``StoreError/Code/olderSchema``; `inMemoryCopy(of:)` reads it brought up to date).
    ///
    /// For a database whose folder cannot be written (a read-only file system, a backup snapshot, a
    /// folder without write permission), where SQLite cannot create the `-wal` and `-shm` files a
    /// connection to a database in WAL mode needs. Without a log the file is read as it is
    /// (`immutable`: no locks, no `-shm`). With one (a snapshot of a home in use, a process killed),
    /// the transactions in it are part of the database, and are read too, the `-shm` file only read
    /// (`readonly_shm`; SQLite then needs it beside the log).
    ///
    /// - Important: only for a database no process is changing: an immutable file is never read again
    ///   for another's changes.
    public convenience init(readingOnly path: String, busyTimeout: Double = 10) throws(StoreError) {
        var status = stat()
        if stat(path, &status) == 0 { try Self.refuseUnusable(status, at: path) }   // a missing one: SQLite says it cannot be opened
        let logged = stat(path + "-wal", &status) == 0 && status.st_size > 0
        try self.init(opening: Self.uri(path, query: logged ? "mode=ro&readonly_shm=1" : "mode=ro&immutable=1"), named: path,
                      flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, busyTimeout: busyTimeout)
    }

    /// A copy in memory of the database at `path`, read as `init(readingOnly:)` reads it: it can be
    /// brought up to date and changed while nothing on disk changes, at the cost of the database's
    /// size in memory. Its messages name `path`.
    public static func inMemoryCopy(of path: String) throws(StoreError) -> Database {
        let source = try Database(readingOnly: path)
        defer { withExtendedLifetime(source) {} }   // read through its handle until the copy is made
        let copy = try Database(opening: ":memory:", named: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, busyTimeout: 0)
        guard let backup = sqlite3_backup_init(copy.raw, "main", source.raw, "main") else {
            throw copy.error(sqlite3_extended_errcode(copy.raw), nil)
        }
        let code = sqlite3_backup_step(backup, -1)
        sqlite3_backup_finish(backup)   // leaves the step's error, if any, on the copy's connection
        guard code == SQLITE_DONE else { throw copy.error(code, nil) }
        return copy
    }

    /// `path` as an SQLite `file:` URI with `query`, each byte of the path percent-encoded but
    /// letters, digits, `-._~` and `/` (a `?`, `#` or `%` in a name would end or change it).
    static func uri(_ path: String, query: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var bytes = Array((path.hasPrefix("/") ? "file://" : "file:").utf8)
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self) + "?" + query
    }
}
