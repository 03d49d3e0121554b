import CSQLite

/// A failure of the SQLite layer: one line for users, and SQLite's code for programs.
///
/// The ``message`` says what happened to the database and what to do, in words (read-only, damaged,
/// busy, a full disk …), with SQLite's own explanation where it helps; never the SQL that failed,
/// which is kept apart in ``statement`` for developers.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// SQLite's extended result code, or one of Monsoon's own (negative) codes.
    public var code: Int32
    /// One line: what happened and what to do.
    public var message: String
    /// SQLite's own explanation ("database disk image is malformed"), when SQLite gave one; the
    /// message quotes it where it helps.
    public var reason: String?
    /// The SQL statement that failed, if one did: for a debugger or a bug report, never for users.
    public var statement: String?

    /// An error with SQLite's (extended) result `code`, or one of Monsoon's negative ones, its one-line
    /// message, SQLite's explanation and the statement that failed, if any.
    public init(code: Int32, message: String, reason: String? = nil, statement: String? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
        self.statement = statement
    }

    /// The message.
    public var description: String { message }

    /// The primary result code (`SQLITE_BUSY` for `SQLITE_BUSY_SNAPSHOT`, …).
    public var primaryCode: Int32 { code >= 0 ? code & 0xFF : code }

    /// Another connection held the lock for longer than the busy timeout. The C code is `SQLITE_BUSY`.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    /// The file is damaged, or is not an SQLite database at all (an empty file included). The C codes are
    /// `SQLITE_CORRUPT` and `SQLITE_NOTADB`.
    public var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    /// The disk holding the database is full. The C code is `SQLITE_FULL` (also for an I/O error whose errno was ENOSPC).
    public var isDiskFull: Bool { primaryCode == SQLITE_FULL }
    /// A `UNIQUE`, `NOT NULL` or foreign-key constraint failed. The C code is `SQLITE_CONSTRAINT`.
    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }
    /// The database cannot be written: its file, its folder or its file system is read-only. The C code is `SQLITE_READONLY`.
    public var isReadOnly: Bool { primaryCode == SQLITE_READONLY }

    /// The code of `newerSchema`.
    public static let newerSchemaCode: Int32 = -1

    /// The database was written by a newer Monsoon, whose schema this one does not know.
    public static func newerSchema(path: String, component: String, version: Int, supported: Int) -> StoreError {
        StoreError(code: newerSchemaCode,
                   message: "the database \(path) has \(component) schema version \(version), newer than this Monsoon understands (\(supported)); use a newer monsoon, it was left untouched")
    }
}
