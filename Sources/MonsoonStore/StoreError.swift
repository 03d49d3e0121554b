import CSQLite

/// A failure of the SQLite layer, with SQLite's own message.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// SQLite's extended result code, or one of Monsoon's own (negative) codes.
    public var code: Int32
    /// One line: what failed and SQLite's explanation.
    public var message: String

    /// An error with SQLite's (extended) result `code`, or one of Monsoon's negative ones, and its one-line message.
    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// The primary result code (`SQLITE_BUSY` for `SQLITE_BUSY_SNAPSHOT`, …).
    public var primaryCode: Int32 { code >= 0 ? code & 0xFF : code }

    /// Another connection held the lock for longer than the busy timeout. The C code is `SQLITE_BUSY`.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    /// The file is damaged, or is not an SQLite database at all. The C codes are `SQLITE_CORRUPT` and `SQLITE_NOTADB`.
    public var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    /// The disk holding the database is full. The C code is `SQLITE_FULL` (also for an I/O error whose errno was ENOSPC).
    public var isDiskFull: Bool { primaryCode == SQLITE_FULL }
    /// A `UNIQUE`, `NOT NULL` or foreign-key constraint failed. The C code is `SQLITE_CONSTRAINT`.
    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }

    /// The code of `newerSchema`.
    public static let newerSchemaCode: Int32 = -1

    /// The database was written by a newer Monsoon, whose schema this one does not know.
    public static func newerSchema(path: String, component: String, version: Int, supported: Int) -> StoreError {
        StoreError(code: newerSchemaCode,
                   message: "the database \(path) has \(component) schema version \(version), newer than this Monsoon understands (\(supported)); use a newer monsoon, it was left untouched")
    }
}
