/// A failure of the PostgreSQL layer: one line for users, and a code for programs.
///
/// The ``message`` says what happened and what to do, in words; it never holds a password (a
/// connection string in it is redacted, see ``PostgresConnectionString``), nor libpq's internals
/// (`PGRES_FATAL_ERROR`), nor the SQL that failed, which is kept apart in ``statement`` for
/// developers.
public struct PostgresError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, as Monsoon tells failures apart: an open set, as swift-system's `Errno`.
    /// Compare with the named codes and keep a `default`; the server's own code is ``sqlState``.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// A code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The name.
        public var description: String { rawValue }

        /// No connection could be made: nothing listens there, the host is unknown, the user,
        /// password or database was refused, the server is starting or full.
        public static let connectionFailed = Code(rawValue: "connectionFailed")
        /// The connection string cannot be read (a bad URL, an unknown option): nothing was tried.
        public static let invalidConnectionString = Code(rawValue: "invalidConnectionString")
        /// An open connection broke (the server stopped or restarted, the network dropped it);
        /// `PostgresConnection.reconnect()` makes it again.
        public static let connectionLost = Code(rawValue: "connectionLost")
        /// The server refused a statement for a reason without a code of its own here; see ``sqlState``.
        public static let query = Code(rawValue: "query")
        /// A `UNIQUE` or primary key constraint refused a row. The SQLSTATE is `23505`.
        public static let uniqueViolation = Code(rawValue: "uniqueViolation")
        /// A foreign key refused a row or a deletion. The SQLSTATE is `23503`.
        public static let foreignKeyViolation = Code(rawValue: "foreignKeyViolation")
        /// A serializable or repeatable-read transaction lost to a concurrent one: run it again.
        /// The SQLSTATE is `40001`.
        public static let serializationFailure = Code(rawValue: "serializationFailure")
        /// The server broke a deadlock by failing this transaction: run it again. The SQLSTATE is `40P01`.
        public static let deadlockDetected = Code(rawValue: "deadlockDetected")
        /// The server or libpq answered something this layer does not handle (a `COPY`, a bad
        /// response): a bug to report.
        public static let protocolViolation = Code(rawValue: "protocolViolation")
        /// A value that cannot be sent (text with a NUL character, a bad channel name) or a column
        /// that cannot be read as the type asked for.
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// The database's schema was made by a newer Monsoon.
        public static let newerSchema = Code(rawValue: "newerSchema")
        /// A live worker has the name a worker was started with.
        public static let nameInUse = Code(rawValue: "nameInUse")
    }

    /// What failed, for programs.
    public var code: Code
    /// The server's five-character SQLSTATE ("42601"), when the server reported the error.
    public var sqlState: String?
    /// One line: what happened and what to do.
    public var message: String
    /// The server's or libpq's own explanation, trimmed to its first line and redacted; the
    /// message quotes it where it helps.
    public var reason: String?
    /// The constraint that refused a row ("monsoon_jobs_key_key"), for a constraint violation.
    public var constraint: String?
    /// The SQL that failed, if any: for a debugger or a bug report, never for users.
    public var statement: String?

    /// An error with `code` and its one-line message.
    public init(code: Code, message: String, sqlState: String? = nil, reason: String? = nil, constraint: String? = nil, statement: String? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.reason = reason
        self.constraint = constraint
        self.statement = statement
    }

    /// The message.
    public var description: String { message }

    /// Running the same transaction again may succeed: it lost a race (a serialization failure,
    /// a deadlock), or the connection broke and can be made again.
    public var isTransient: Bool {
        code == .serializationFailure || code == .deadlockDetected || code == .connectionLost
    }
}
