import CSQLite
import Foundation

/// One SQLite connection.
///
/// Opened in WAL mode with a busy timeout, so readers never block the writer and
/// a writer waits for another process's short transaction instead of failing.
/// Writes go through `write`, which begins `IMMEDIATE`: the lock is taken up
/// front, so two processes never deadlock upgrading a read to a write.
///
/// - Important: confined to one thread at a time; never `Sendable`. Each thread
///   or process that needs the database opens its own connection.
public final class Database {
    let raw: OpaquePointer
    /// The file path, or ":memory:".
    public let path: String
    private var statements: [String: Statement] = [:]
    private var keyedStatements: [ObjectIdentifier: Statement] = [:]

    /// Opens (creating when missing) the database at `path`, or an in-memory one for ":memory:".
    /// A new database file is private to its owner (mode 0600, and so are its `-wal` and `-shm`
    /// files, which SQLite creates with the database's mode): it holds credentials.
    ///
    /// - Parameter busyTimeout: how long to wait for another connection's lock, in seconds.
    public init(path: String, busyTimeout: Double = 10) throws(StoreError) {
        if path != ":memory:" && !path.isEmpty {
            // An empty file is an empty database; O_EXCL leaves an existing one as it is.
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor >= 0 { close(descriptor) }
        }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw StoreError(code: code, message: "cannot open the database \(path): \(message)")
        }
        raw = handle
        self.path = path
        sqlite3_busy_timeout(raw, Int32(busyTimeout * 1000))
        do throws(StoreError) {
            // The first read of the file: a corrupt or foreign file fails here, untouched.
            _ = try scalarInt("PRAGMA schema_version")
            if path != ":memory:" && !path.isEmpty {
                let mode = try scalarText("PRAGMA journal_mode = WAL")
                if mode?.lowercased() != "wal" {
                    throw StoreError(code: SQLITE_ERROR, message: "cannot use write-ahead logging for \(path) (journal mode \(mode ?? "unknown"))")
                }
            }
            // NORMAL in WAL mode: a crash loses no committed transaction; a power cut
            // may lose the last few, which only ever rolls state back, never forward.
            // An 8 MiB page cache: a batch of thousands of inserts stays in memory until commit.
            try execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -8192;")
        } catch {
            statements.removeAll()
            keyedStatements.removeAll()
            sqlite3_close_v2(raw)
            if error.isCorrupt {
                throw StoreError(code: error.code, message: "the database \(path) is damaged or not a Monsoon database (\(error.message)); it was left untouched: move it away to start afresh")
            }
            throw error
        }
    }

    deinit {
        statements.removeAll()
        keyedStatements.removeAll()
        sqlite3_close_v2(raw)
    }

    /// Runs one or more statements that return nothing.
    public func execute(_ sql: String) throws(StoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(raw, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(raw))
            sqlite3_free(message)
            throw error(code, "\"\(sql.prefix(80))\" failed", text: text)
        }
    }

    /// A prepared statement for `sql`, kept for reuse.
    public func statement(_ sql: String) throws(StoreError) -> Statement {
        if let cached = statements[sql] { return cached }
        let statement = try Statement(database: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// A prepared statement kept under `key` (a static marker), so hot paths skip
    /// hashing their SQL text on every call.
    public func statement(_ key: AnyObject, _ sql: @autoclosure () -> String) throws(StoreError) -> Statement {
        if let cached = keyedStatements[ObjectIdentifier(key)] { return cached }
        let statement = try Statement(database: self, sql: sql())
        keyedStatements[ObjectIdentifier(key)] = statement
        return statement
    }

    /// Runs `sql` with `values`.
    public func run(_ sql: String, _ values: SQLValueConvertible...) throws(StoreError) {
        let statement = try statement(sql)
        try statement.bind(values)
        while try statement.step() {}
        try statement.bind([])
    }

    /// The first column of the first row, as an integer.
    public func scalarInt(_ sql: String, _ values: SQLValueConvertible...) throws(StoreError) -> Int? {
        let statement = try statement(sql)
        try statement.bind(values)
        defer { sqlite3_reset(statement.raw) }
        guard try statement.step() else { return nil }
        return Row(statement: statement).optionalInt(0)
    }

    /// The first column of the first row, as text.
    public func scalarText(_ sql: String, _ values: SQLValueConvertible...) throws(StoreError) -> String? {
        let statement = try statement(sql)
        try statement.bind(values)
        defer { sqlite3_reset(statement.raw) }
        guard try statement.step() else { return nil }
        return Row(statement: statement).text(0)
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`), committing when it
    /// returns and rolling back when it throws. Inside another transaction it is a savepoint
    /// of it: its work is undone alone when it throws, and committed with the outer one.
    public func write<T>(_ body: () throws -> T) throws -> T {
        if sqlite3_get_autocommit(raw) == 0 {
            try execute("SAVEPOINT nested_write")
            do {
                let result = try body()
                try execute("RELEASE nested_write")
                return result
            } catch {
                // Undoing the savepoint can only fail with the connection itself: the outer
                // transaction then fails too, and reports it.
                try? execute("ROLLBACK TO nested_write")
                try? execute("RELEASE nested_write")
                throw error
            }
        }
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in a read transaction: one consistent snapshot.
    public func read<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN DEFERRED")
        defer { try? execute("COMMIT") }
        return try body()
    }

    /// The rowid of the last insert on this connection.
    public var lastInsertRowID: Int { Int(sqlite3_last_insert_rowid(raw)) }

    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes(raw)) }

    /// Changes when another connection commits: a cheap way to notice other processes' writes.
    public func dataVersion() throws(StoreError) -> Int {
        try scalarInt("PRAGMA data_version") ?? 0
    }

    /// `PRAGMA integrity_check`: "ok" when the file is sound.
    public func integrityCheck() throws(StoreError) -> String {
        try scalarText("PRAGMA integrity_check") ?? "no answer"
    }

    /// The error of the call that just failed with `code`. A full disk is said in plain words:
    /// SQLite reports it as `SQLITE_FULL`, or as a bare "disk I/O error" when it could not
    /// grow the WAL index, which only the system's errno tells apart.
    func error(_ code: Int32, _ what: String, text: String? = nil) -> StoreError {
        let extended = sqlite3_extended_errcode(raw)
        let result = extended != 0 ? extended : code
        let text = text ?? String(cString: sqlite3_errmsg(raw))
        let errno = sqlite3_system_errno(raw)
        if result & 0xFF == SQLITE_FULL || (result & 0xFF == SQLITE_IOERR && (errno == ENOSPC || errno == EDQUOT)) {
            return StoreError(code: SQLITE_FULL, message: "the disk holding the database \(path) is full (\(text)); free some space and try again")
        }
        return StoreError(code: result, message: "\(what): \(text)")
    }
}
