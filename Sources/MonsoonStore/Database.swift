import CSQLite
import FoundationEssentials

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
    /// The file path (an in-memory copy's is its file's, for messages), or ":memory:".
    public let path: String
    /// Whether the connection only reads (`init(readingOnly:)`): the `Migrator` then checks the
    /// schema instead of bringing it up to date.
    public let isReadOnly: Bool
    private var statements: [String: Statement] = [:]
    private var keyedStatements: [ObjectIdentifier: Statement] = [:]

    /// Opens (creating when missing) the database at `path`, or an in-memory one for ":memory:".
    /// A new database file is private to its owner (mode 0600, and so are its `-wal` and `-shm`
    /// files, which SQLite creates with the database's mode): it holds credentials.
    ///
    /// A new file is made whole before it takes its name (`createFile(at:)`), so an existing empty
    /// file is one whose contents were lost, refused as damaged rather than taken for a new database.
    ///
    /// - Parameter busyTimeout: how long to wait for another connection's lock, in seconds.
    public convenience init(path: String, busyTimeout: Double = 10) throws(StoreError) {
        let onDisk = path != ":memory:" && !path.isEmpty
        if onDisk { try Self.prepareFile(at: path) }
        // No SQLITE_OPEN_CREATE for a file: it exists by now, and if it went away meanwhile, SQLite
        // must not make an empty one with the umask's mode.
        try self.init(opening: path, named: path, flags: SQLITE_OPEN_READWRITE | (onDisk ? 0 : SQLITE_OPEN_CREATE), busyTimeout: busyTimeout)
    }

    /// Opens `filename` (a path, ":memory:" or a `file:` URI) with `flags`, as the database `path`.
    init(opening filename: String, named path: String, flags: Int32, busyTimeout: Double) throws(StoreError) {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(filename, &handle, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            let system = handle.map { sqlite3_system_errno($0) } ?? 0
            sqlite3_close_v2(handle)
            throw StoreError.failure(code: code, reason: message, systemErrno: system, path: path, statement: nil)
        }
        raw = handle
        self.path = path
        isReadOnly = flags & SQLITE_OPEN_READONLY != 0
        setBusyTimeout(busyTimeout)
        do throws(StoreError) {
            // The first read of the file: a corrupt or foreign file fails here, untouched.
            _ = try scalarInt("PRAGMA schema_version")
            if !isReadOnly && filename != ":memory:" && !filename.isEmpty {
                let mode = try scalarText("PRAGMA journal_mode = WAL")
                if mode?.lowercased() != "wal" {
                    throw StoreError(code: SQLITE_ERROR, message: "cannot use write-ahead logging for \(path) (journal mode \(mode ?? "unknown"))")
                }
            }
            // NORMAL in WAL mode: a crash loses no committed transaction; a power cut
            // may lose the last few, which only ever rolls state back, never forward.
            try execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        } catch {
            // Not closed here: every stored property is set, so the throw runs deinit, which closes
            // the connection (closing it here too closed it twice, a use after free).
            if error.isCorrupt {
                throw StoreError(code: error.code, message: "the database \(path) is damaged or not a Monsoon database (\(error.reason ?? error.message)); it was left untouched; move it away to start afresh",
                                 reason: error.reason, statement: error.statement)
            }
            throw error
        }
    }

    deinit {
        statements.removeAll()
        keyedStatements.removeAll()
        sqlite3_close_v2(raw)
    }

    /// How long a statement waits for another connection's lock, in seconds, before it fails.
    public func setBusyTimeout(_ seconds: Double) {
        sqlite3_busy_timeout(raw, seconds.isNaN ? 0 : Int32(min(max(seconds * 1000, 0), Double(Int32.max))))
    }

    /// Whether the connection is to a file (not to a database in memory, a copy's included).
    public var isFile: Bool {
        sqlite3_db_filename(raw, "main").map { $0.pointee != 0 } ?? false
    }

    /// Runs one or more statements that return nothing.
    public func execute(_ sql: String) throws(StoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(raw, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(raw))
            sqlite3_free(message)
            throw error(code, sql, text: text)
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
        try scalar(sql, values) { sqlite3_column_type($0, 0) == SQLITE_NULL ? nil : Int(sqlite3_column_int64($0, 0)) }
    }

    /// The first column of the first row, as text.
    public func scalarText(_ sql: String, _ values: SQLValueConvertible...) throws(StoreError) -> String? {
        try scalar(sql, values) { sqlite3_column_text($0, 0).map { String(cString: $0) } }
    }

    /// The first row's value as `read` reads it from the statement; nil when there is no row.
    private func scalar<T>(_ sql: String, _ values: [SQLValueConvertible], read: (OpaquePointer) -> T?) throws(StoreError) -> T? {
        let statement = try statement(sql)
        try statement.bind(values)
        defer { sqlite3_reset(statement.raw) }
        return try statement.step() ? read(statement.raw) : nil
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`), committing when it
    /// returns and rolling back when it throws. Inside another transaction it is a savepoint
    /// of it: its work is undone alone when it throws, and committed with the outer one.
    /// Its statements are prepared once (`run`): parsed on every call, they cost a small file's
    /// transaction more than its rows.
    public func write<T>(_ body: () throws -> T) throws -> T {
        if sqlite3_get_autocommit(raw) == 0 {
            try run("SAVEPOINT nested_write")
            do {
                let result = try body()
                try run("RELEASE nested_write")
                return result
            } catch {
                // Undoing the savepoint can only fail with the connection itself: the outer
                // transaction then fails too, and reports it.
                try? run("ROLLBACK TO nested_write")
                try? run("RELEASE nested_write")   // as the rollback: only the connection fails it, and the outer transaction says so
                throw error
            }
        }
        try run("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            // After a full disk or an I/O error SQLite has rolled back already, and this finds nothing
            // to undo; either way nothing of the body stays, and the body's error says why.
            try? run("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in a read transaction: one consistent snapshot.
    public func read<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN DEFERRED")
        defer { try? run("COMMIT") }   // ends a read: nothing was written, so a failure loses nothing
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

    /// The error of the call that just failed with `code` while running `statement`: said in words
    /// (read-only, damaged, full, busy …; see `StoreError.failure`), the statement kept out of the message.
    func error(_ code: Int32, _ statement: String?, text: String? = nil) -> StoreError {
        let extended = sqlite3_extended_errcode(raw)
        let result = extended != 0 ? extended : code
        return StoreError.failure(code: result, reason: text ?? String(cString: sqlite3_errmsg(raw)), systemErrno: sqlite3_system_errno(raw),
                                  path: path, statement: statement)
    }
}
