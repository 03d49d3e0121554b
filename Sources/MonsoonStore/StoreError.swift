import CSQLite
// The store's errors are `CodedError`s: its clients get the type with the store.
@_exported import MonsoonBasics

/// The domain of ``StoreError``: SQLite's result codes, and Monsoon's own.
public enum StoreDomain: ErrorDomain {
    /// SQLite's extended result code, or one of Monsoon's own (negative) codes.
    public typealias CodeValue = Int32

    /// What a failure of the SQLite layer carries besides its code and message.
    public struct Details: Hashable, Sendable {
        /// SQLite's own explanation ("database disk image is malformed"), when SQLite gave one; the
        /// message quotes it where it helps.
        public var reason: String?
        /// The SQL statement that failed, if one did: for a debugger or a bug report, never for users.
        public var statement: String?
    }
}

/// A failure of the SQLite layer: one line for users, and SQLite's code for programs.
///
/// The message says what happened to the database and what to do, in words (read-only, damaged,
/// busy, a full disk …), with SQLite's own explanation where it helps (`reason`); never the SQL
/// that failed, which is kept apart in `statement` for developers.
public typealias StoreError = CodedError<StoreDomain>

/// SQLite's extended result code, or one of Monsoon's own (negative) codes, named for the codes
/// callers decide on. Compare a code's ``primary`` with them (`SQLITE_BUSY_SNAPSHOT` is a kind
/// of `.busy`), and keep a `default`.
extension StoreError.Code {
    /// The primary result code (`.busy` for `SQLITE_BUSY_SNAPSHOT`, …); Monsoon's own codes are their own.
    public var primary: Self { rawValue >= 0 ? Self(rawValue: rawValue & 0xFF) : self }

    /// A generic failure (a statement SQLite refused, a journal mode it would not take). The C code is `SQLITE_ERROR`.
    public static var error: Self { Self(rawValue: SQLITE_ERROR) }
    /// Another connection held the lock for longer than the busy timeout. The C code is `SQLITE_BUSY`.
    public static var busy: Self { Self(rawValue: SQLITE_BUSY) }
    /// A table is locked by this connection's other statement. The C code is `SQLITE_LOCKED`.
    public static var locked: Self { Self(rawValue: SQLITE_LOCKED) }
    /// The database cannot be written. The C code is `SQLITE_READONLY`.
    public static var readOnly: Self { Self(rawValue: SQLITE_READONLY) }
    /// Reading or writing the file failed. The C code is `SQLITE_IOERR`.
    public static var ioError: Self { Self(rawValue: SQLITE_IOERR) }
    /// The file is damaged. The C code is `SQLITE_CORRUPT`.
    public static var corrupt: Self { Self(rawValue: SQLITE_CORRUPT) }
    /// The disk holding the database is full. The C code is `SQLITE_FULL`.
    public static var full: Self { Self(rawValue: SQLITE_FULL) }
    /// The file cannot be opened. The C code is `SQLITE_CANTOPEN`.
    public static var cantOpen: Self { Self(rawValue: SQLITE_CANTOPEN) }
    /// A `UNIQUE`, `NOT NULL` or foreign-key constraint failed. The C code is `SQLITE_CONSTRAINT`.
    public static var constraint: Self { Self(rawValue: SQLITE_CONSTRAINT) }
    /// The file is not an SQLite database (an empty file included). The C code is `SQLITE_NOTADB`.
    public static var notADatabase: Self { Self(rawValue: SQLITE_NOTADB) }
    /// The database was written by a newer Monsoon, whose schema this one does not know (Monsoon's own code).
    public static var newerSchema: Self { Self(rawValue: -1) }
    /// A database opened only to read (`Database(readingOnly:)`) would have to be brought up to
    /// date for this Monsoon: its tables of a component are older, or missing (Monsoon's own code).
    /// `Database.inMemoryCopy(of:)` reads it brought up to date.
    public static var olderSchema: Self { Self(rawValue: -2) }
}

extension StoreError {
    public init(code: Code, message: String, reason: String? = nil, statement: String? = nil) {
        self.init(code, message, details: .init(reason: reason, statement: statement))
    }

    /// An error with SQLite's (extended) result `code`, or one of Monsoon's negative ones.
    public init(code: Int32, message: String, reason: String? = nil, statement: String? = nil) {
        self.init(code: Code(rawValue: code), message: message, reason: reason, statement: statement)
    }

    /// `.busy` or `.locked`: another connection held the lock for longer than the busy timeout.
    public var isBusy: Bool { code.primary == .busy || code.primary == .locked }
    /// `.corrupt` or `.notADatabase` (an empty file included).
    public var isCorrupt: Bool { code.primary == .corrupt || code.primary == .notADatabase }
    /// `.full`, also for an I/O error whose errno was ENOSPC.
    public var isDiskFull: Bool { code.primary == .full }
    public var isConstraintViolation: Bool { code.primary == .constraint }
    /// `.readOnly`: its file, its folder or its file system is read-only.
    public var isReadOnly: Bool { code.primary == .readOnly }

    public static func newerSchema(path: String, component: String, version: Int, supported: Int) -> StoreError {
        StoreError(code: .newerSchema,
                   message: "the database \(path) has \(component) schema version \(version), newer than this Monsoon understands (\(supported)); use a newer monsoon, it was left untouched")
    }

    /// The database, opened only to read, would have to be brought up to date for this Monsoon.
    public static func olderSchema(path: String, component: String, version: Int, supported: Int) -> StoreError {
        let has = version == 0 ? "has no \(component) tables" : "has \(component) schema version \(version), older than this Monsoon's (\(supported))"
        return StoreError(code: .olderSchema,
                          message: "the database \(path) \(has), and is open only to read, so it cannot be brought up to date; open it once with a command that writes, where it can be written")
    }
}
