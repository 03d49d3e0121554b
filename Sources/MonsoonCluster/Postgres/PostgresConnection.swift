import CCrypto
import CLibPQ
import FoundationEssentials
import MonsoonBasics

/// One connection to a PostgreSQL server, through libpq.
///
/// Statements run synchronously: each call waits for the server's answer. Parameters go as text
/// (`$1`, `$2` …, see ``PostgresValue``), rows come back copied into a ``PostgresResult``, and
/// every failure is a ``PostgresError`` whose message says what to do and never shows a password.
///
/// - Important: confined to one thread at a time, like a SQLite connection; never `Sendable`.
///   A call blocks its thread for a round trip to the server (for as long as `connectTimeout` to
///   connect): run it on a thread of its own, never on Swift's cooperative pool.
public final class PostgresConnection {
    let raw: OpaquePointer
    /// The connection string it was opened with; shown redacted.
    public let connectionString: PostgresConnectionString
    /// The channels `listen` subscribed to, in order: `reconnect()` listens to them again, since
    /// a new session has none (graphile-worker#449 is what forgetting it does).
    var channels: [String] = []
    /// The statements prepared in this session: their names by their text (`monsoon_` and the
    /// text's SHA-256, so one name means one text even where a pooler lets sessions meet). Planning
    /// the claim alone cost PostgreSQL a third of running it; prepared, a statement is parsed once
    /// per session, and planned once its generic plan proves as good.
    var prepared: [String: String] = [:]
    /// False once a prepared statement went missing: the session runs behind a transaction
    /// pooler, where each statement must be parsed where it runs.
    var preparing = true
    /// At most this many statements are prepared per session: the rest, rare ones (the
    /// administration's, a test's), run unprepared, so a session never piles up plans.
    static let maxPrepared = 64

    /// Connects with `connectionString`, which is exactly what libpq takes: a `postgresql://` URL,
    /// `key=value` pairs, a database name, or "" for the `PG*` environment variables and
    /// libpq's defaults. A password comes from the string, `PGPASSWORD` or the password file
    /// (`PGPASSFILE`, `~/.pgpass`), as libpq finds it.
    ///
    /// - Parameter connectTimeout: how long to wait for the server, in seconds, when neither the
    ///   string (`connect_timeout`) nor `PGCONNECT_TIMEOUT` says: libpq would wait for the system's
    ///   TCP timeout, minutes, for a host that does not answer.
    /// - Parameter settings: more of libpq's keywords (`keepalives_idle`, `tcp_user_timeout` …), as
    ///   defaults the string may override.
    public init(_ connectionString: String = "", connectTimeout: Int = 10, settings: [(String, String)] = []) throws(PostgresError) {
        if let reason = monsoon_pq_open() {
            throw PostgresError(code: .connectionFailed,
                                message: "cannot open libpq, PostgreSQL's client library: \(String(cString: reason)); install it: apt-get install libpq5")
        }
        let string = PostgresConnectionString(connectionString)
        try Self.validate(string)
        // The string is expanded in place of dbname, after the defaults here, so what it sets wins.
        var options: [(String, String)] = [("fallback_application_name", "monsoon")] + settings
        if getenv("PGCONNECT_TIMEOUT") == nil { options.append(("connect_timeout", String(connectTimeout))) }
        options.append(("dbname", connectionString))
        // libpq starts OpenSSL for a server that takes TLS: first without its exit handler (see monsoon_crypto_init).
        monsoon_crypto_init()
        let connection = Self.withCStringPointers(options.map(\.0) + [nil]) { keywords in
            Self.withCStringPointers(options.map(\.1) + [nil]) { values in monsoon_PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else {
            throw PostgresError(code: .connectionFailed, message: "cannot connect to PostgreSQL: out of memory; close other programs and try again")
        }
        monsoon_pq_discard_notices(connection)
        guard monsoon_PQstatus(connection) == CONNECTION_OK else {
            let reason = string.scrub(PostgresError.firstLine(of: Self.text(monsoon_PQerrorMessage(connection))))
            let error = PostgresError.isBadParameter(reason) ? PostgresError.invalidConnectionString(reason: reason, redacted: string.redacted)
                : PostgresError.connectionFailed(reason: reason, server: Self.server(of: connection))
            monsoon_PQfinish(connection)
            throw error
        }
        raw = connection
        self.connectionString = string
        // A failure here runs deinit, which closes the connection: every stored property is set.
        try startSession()
    }

    deinit { monsoon_PQfinish(raw) }

    /// Whether the connection was working when last used: libpq notices a broken one only when it
    /// next reads or writes (a statement, `waitForNotifications`).
    public var isConnected: Bool { monsoon_PQstatus(raw) == CONNECTION_OK }

    public var database: String { Self.text(monsoon_PQdb(raw)) }

    /// The server, as messages name it: `127.0.0.1:5432`, or a socket's path.
    public var server: String { Self.server(of: raw) }

    /// The database as it may be shown: a URL as given, its password as `***`; for `key=value`
    /// pairs, a database name or "", which `PG*` variables may complete, the URL of what libpq
    /// connected to (`postgresql://monsoon@db.example.com:5432/monsoon`, a socket's folder
    /// percent-encoded as libpq reads it).
    public var displayName: String {
        if PostgresConnectionString.isURL(connectionString.text) { return connectionString.redacted }
        // Foundation's .urlHostAllowed on Linux, which has no `:`, `[` or `]`: an IPv6 host's colons
        // are encoded (`%3A%3A1`), which libpq decodes, where a bare `::1` would end the host.
        let host = Self.text(monsoon_PQhost(raw)).percentEncoded(allowing: "!$&'()*+,-.;=_~")
        return "postgresql://\(Self.text(monsoon_PQuser(raw)))@\(host):\(Self.text(monsoon_PQport(raw)))/\(Self.text(monsoon_PQdb(raw)))"
    }

    /// Runs one statement with `parameters` as `$1`, `$2` …, and returns its rows.
    ///
    ///     let rows = try connection.execute("SELECT id, title FROM monsoon_feeds WHERE url = $1", [url])
    @discardableResult
    public func execute(_ sql: String, _ parameters: [PostgresValue?] = []) throws(PostgresError) -> PostgresResult {
        let texts = try Self.texts(of: parameters, for: sql)
        guard let name = try statementName(for: sql) else {
            return try handle(Self.withCStringPointers(texts) { monsoon_PQexecParams(raw, sql, Int32(texts.count), nil, $0, nil, nil, 0) }, sql)
        }
        do {
            return try handle(Self.withCStringPointers(texts) { monsoon_PQexecPrepared(raw, name, Int32(texts.count), $0, nil, nil, 0) }, sql)
        } catch {
            switch error.sqlState {
            case "26000":
                // Gone: a transaction pooler (PgBouncer without `max_prepared_statements`) ran it
                // on another session. The one transaction that found out is undone; the session
                // prepares nothing more, which is all that works there.
                (prepared, preparing) = ([:], false)
            case "0A000":
                // Planned for columns a migration changed: prepared again at its next run.
                forgetPrepared(sql, name: name)
            default:
                break
            }
            throw error
        }
    }

    /// The name `sql` is prepared under in this session, prepared now if it is not yet; nil for a
    /// statement left unprepared: one that is not a query (`BEGIN`, `CREATE DATABASE`: nothing to
    /// plan), or any once the session has `maxPrepared`.
    private func statementName(for sql: String) throws(PostgresError) -> String? {
        if let name = prepared[sql] { return name }
        guard preparing, prepared.count < Self.maxPrepared, Self.isQuery(sql) else { return nil }
        let name = "monsoon_" + SHA256.hex(Data(sql.utf8)).prefix(32)
        do {
            _ = try handle(monsoon_PQprepare(raw, name, sql, 0, nil), sql)
        } catch where error.sqlState == "42P05" {
            // Left from before a migration (`forgetPrepared` could not drop it then): made again.
            _ = try handle(monsoon_PQexec(raw, "DEALLOCATE " + name), sql)
            _ = try handle(monsoon_PQprepare(raw, name, sql, 0, nil), sql)
        }
        prepared[sql] = name
        return name
    }

    /// Whether `sql` is planned: a SELECT, INSERT, UPDATE, DELETE, or one of them after WITH.
    static func isQuery(_ sql: String) -> Bool {
        let word = sql.drop { $0.isWhitespace }.prefix { $0.isLetter }.uppercased()
        return ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains(word)
    }

    /// Drops a prepared statement the server says is stale: prepared again at its next run.
    private func forgetPrepared(_ sql: String, name: String) {
        prepared[sql] = nil
        // Outside a failed transaction only (in one, every statement fails until the rollback);
        // one left is dropped when it is prepared again.
        if monsoon_PQtransactionStatus(raw) == PQTRANS_IDLE { monsoon_PQclear(monsoon_PQexec(raw, "DEALLOCATE " + name)) }
    }

    /// The parameters' texts, refusing one that holds a NUL.
    private static func texts(of parameters: [PostgresValue?], for sql: String) throws(PostgresError) -> [String?] {
        try parameters.enumerated().map { offset, parameter throws(PostgresError) in
            let text = parameter?.postgresText
            // libpq reads text parameters up to their first NUL: the rest would vanish unsaid.
            if let text, text.utf8.contains(0) {
                throw PostgresError(code: .invalidValue, message: "parameter $\(offset + 1) holds a NUL character, which PostgreSQL text cannot hold; please report this",
                                    statement: sql)
            }
            return text
        }
    }

    /// Runs statements separated by semicolons, without parameters (PostgreSQL's simple query
    /// protocol, which `execute` cannot use for more than one): a migration, a `SET`, `LISTEN`s.
    /// - Returns: the last statement's result.
    @discardableResult
    public func executeScript(_ sql: String) throws(PostgresError) -> PostgresResult {
        try handle(monsoon_PQexec(raw, sql), sql)
    }

    /// The rows of `result`, freed here, or its error.
    private func handle(_ result: OpaquePointer?, _ sql: String) throws(PostgresError) -> PostgresResult {
        guard let result else { throw failure(nil, sql) }
        defer { monsoon_PQclear(result) }
        switch monsoon_PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(result)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            abandonCopy()
            throw PostgresError.protocolViolation(reason: "COPY is not supported", server: server, statement: sql)
        default:
            throw failure(result, sql)
        }
    }

    /// Ends a `COPY` the server started, so the connection can go on: its data is not streamed here.
    private func abandonCopy() {
        _ = monsoon_PQputCopyEnd(raw, "COPY is not supported by Monsoon")
        var buffer: UnsafeMutablePointer<CChar>?
        while monsoon_PQgetCopyData(raw, &buffer, 0) > 0 { monsoon_PQfreemem(buffer) }
        while let result = monsoon_PQgetResult(raw) { monsoon_PQclear(result) }
    }

    /// The error of a statement that failed with `result` (nil when libpq had none to give).
    func failure(_ result: OpaquePointer?, _ sql: String?) -> PostgresError {
        let reason = connectionString.scrub(PostgresError.firstLine(of: Self.text(result.map { monsoon_PQresultErrorMessage($0) } ?? monsoon_PQerrorMessage(raw))))
        if monsoon_PQstatus(raw) != CONNECTION_OK {
            return .connectionLost(reason: reason, server: server, statement: sql)
        }
        guard let result, let state = monsoon_pq_sqlstate(result) else {
            return .protocolViolation(reason: reason, server: server, statement: sql)
        }
        let primary = monsoon_pq_primary_message(result).map { String(cString: $0) } ?? reason
        return .server(sqlState: String(cString: state), reason: primary, constraint: monsoon_pq_constraint(result).map { String(cString: $0) },
                       server: server, user: Self.text(monsoon_PQuser(raw)), statement: sql)
    }

    /// What a new session needs: dates in ISO form, which `PostgresRow.date` reads (the server's
    /// default, so usually nothing is sent), and the channels listened to before a reconnect.
    func startSession() throws(PostgresError) {
        prepared = [:]
        var statements: [String] = []
        if !Self.text(monsoon_PQparameterStatus(raw, "DateStyle")).hasPrefix("ISO") { statements.append("SET DateStyle TO ISO") }
        statements += channels.map { "LISTEN " + Self.quotedIdentifier($0) }
        if !statements.isEmpty { try executeScript(statements.joined(separator: "; ")) }
    }

    /// Refuses a connection string libpq cannot read, before trying it: a mistake in the string
    /// is not a server that cannot be reached.
    private static func validate(_ string: PostgresConnectionString) throws(PostgresError) {
        // A bare word is a database name: libpq's parser would refuse it, but connecting takes it.
        if let problem = string.problem { throw PostgresError.invalidConnectionString(reason: problem, redacted: string.redacted) }
        guard PostgresConnectionString.isURL(string.text) || string.text.contains("=") else { return }
        var message: UnsafeMutablePointer<CChar>?
        guard let options = monsoon_PQconninfoParse(string.text, &message) else {
            let reason = message.map { String(cString: $0) } ?? "out of memory"
            monsoon_PQfreemem(message)
            throw PostgresError.invalidConnectionString(reason: string.scrub(PostgresError.firstLine(of: reason)), redacted: string.redacted)
        }
        monsoon_PQconninfoFree(options)
    }

    /// `host:port`, or the socket's path for a host that is a folder.
    static func server(of connection: OpaquePointer) -> String {
        let host = text(monsoon_PQhost(connection))
        let port = text(monsoon_PQport(connection))
        return host.hasPrefix("/") ? "\(host)/.s.PGSQL.\(port)" : "\(host):\(port)"
    }

    /// A C string from libpq, or "" for NULL.
    static func text(_ pointer: UnsafePointer<CChar>?) -> String {
        pointer.map { String(cString: $0) } ?? ""
    }

    /// `name` as an SQL identifier: in double quotes, its own doubled.
    static func quotedIdentifier(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    /// Calls `body` with a C array of pointers to `strings` (NULL for nil), valid during the call:
    /// one buffer holds every string and its terminating NUL.
    private static func withCStringPointers<R>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        var buffer: [CChar] = []
        var offsets: [Int?] = []
        offsets.reserveCapacity(strings.count)
        for string in strings {
            if let string {
                offsets.append(buffer.count)
                buffer.append(contentsOf: string.utf8CString)
            } else {
                offsets.append(nil)
            }
        }
        return buffer.withUnsafeBufferPointer { storage in
            // A non-nil offset means the buffer holds at least that string's NUL: its base is set.
            let pointers = offsets.map { offset in offset.map { storage.baseAddress! + $0 } }
            return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
        }
    }
}
