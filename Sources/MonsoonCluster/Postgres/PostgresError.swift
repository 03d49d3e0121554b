import MonsoonBasics

public enum PostgresDomain: ErrorDomain {
    /// What a failure of the PostgreSQL layer carries besides its code and message.
    public struct Details: Hashable, Sendable {
        /// The server's five-character SQLSTATE ("42601"), when the server reported the error.
        public var sqlState: String?
        /// The server's or libpq's own explanation, trimmed to its first line and redacted; the
        /// message quotes it where it helps.
        public var reason: String?
        /// The constraint that refused a row ("monsoon_feeds_url_key"), for a constraint violation.
        public var constraint: String?
        /// The SQL that failed, if any: for a debugger or a bug report, never for users.
        public var statement: String?
    }
}

/// A failure of the PostgreSQL layer: one line for users, and a code for programs.
///
/// The message says what happened and what to do, in words; it never holds a password (a
/// connection string in it is redacted, see ``PostgresConnectionString``), nor libpq's internals
/// (`PGRES_FATAL_ERROR`), nor the SQL that failed, which is kept apart in `statement` for
/// developers.
public typealias PostgresError = CodedError<PostgresDomain>

/// What failed, as Monsoon tells failures apart: compare with the named codes and keep a
/// `default`; the server's own code is `sqlState`.
extension PostgresError.Code {
    /// No connection could be made: nothing listens there, the host is unknown, the user,
    /// password or database was refused, the server is starting or full.
    public static var connectionFailed: Self { Self(rawValue: "connectionFailed") }
    /// The connection string cannot be read (a bad URL, an unknown option): nothing was tried.
    public static var invalidConnectionString: Self { Self(rawValue: "invalidConnectionString") }
    /// An open connection broke (the server stopped or restarted, the network dropped it);
    /// `PostgresConnection.reconnect()` makes it again.
    public static var connectionLost: Self { Self(rawValue: "connectionLost") }
    /// The server refused a statement for a reason without a code of its own here; see `sqlState`.
    public static var query: Self { Self(rawValue: "query") }
    /// A `UNIQUE` or primary key constraint refused a row. The SQLSTATE is `23505`.
    public static var uniqueViolation: Self { Self(rawValue: "uniqueViolation") }
    /// A foreign key refused a row or a deletion. The SQLSTATE is `23503`.
    public static var foreignKeyViolation: Self { Self(rawValue: "foreignKeyViolation") }
    /// A serializable or repeatable-read transaction lost to a concurrent one: run it again.
    /// The SQLSTATE is `40001`.
    public static var serializationFailure: Self { Self(rawValue: "serializationFailure") }
    /// The server broke a deadlock by failing this transaction: run it again. The SQLSTATE is `40P01`.
    public static var deadlockDetected: Self { Self(rawValue: "deadlockDetected") }
    /// The server or libpq answered something this layer does not handle (a `COPY`, a bad
    /// response): a bug to report.
    public static var protocolViolation: Self { Self(rawValue: "protocolViolation") }
    /// A value that cannot be sent (text with a NUL character, a bad channel name) or a column
    /// that cannot be read as the type asked for.
    public static var invalidValue: Self { Self(rawValue: "invalidValue") }
    /// The database's schema was made by a newer Monsoon.
    public static var newerSchema: Self { Self(rawValue: "newerSchema") }
    /// A live worker has the name a worker was started with.
    public static var nameInUse: Self { Self(rawValue: "nameInUse") }
}

extension PostgresError {
    public init(code: Code, message: String, sqlState: String? = nil, reason: String? = nil, constraint: String? = nil, statement: String? = nil) {
        self.init(code, message, details: .init(sqlState: sqlState, reason: reason, constraint: constraint, statement: statement))
    }

    /// Running the same transaction again may succeed: it lost a race (a serialization failure,
    /// a deadlock), or the connection broke and can be made again.
    public var isTransient: Bool {
        code == .serializationFailure || code == .deadlockDetected || code == .connectionLost
    }
}
