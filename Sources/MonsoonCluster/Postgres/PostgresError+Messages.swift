import FoundationEssentials

extension PostgresError {
    /// The error of a connection that could not be made to `server` (`host:port`), with libpq's
    /// explanation `reason` (trimmed and redacted): what to do depends on what went wrong.
    static func connectionFailed(reason: String, server: String) -> PostgresError {
        let said = reason.lowercased()
        let fix = connectionFixes.first { said.contains($0.says) }?.fix
            ?? "check the connection string and that PostgreSQL is running there"
        return PostgresError(code: .connectionFailed, message: "cannot connect to PostgreSQL at \(server): \(reason); \(fix)", reason: reason)
    }

    /// What to do about a connection that could not be made, by the first pattern libpq's reason matches.
    /// (Built when asked: a `Regex` cannot be shared between threads, and a connection fails rarely.)
    private static var connectionFixes: [(says: Regex<Substring>, fix: String)] {
        [
            (#/connection refused|no such file or directory/#, "check that PostgreSQL is running there and listens on that address and port"),
            (#/password|authentication failed/#, "check the user name and the password (in the connection string, PGPASSWORD or ~/.pgpass)"),
            (#/database.*does not exist/#, "create the database (createdb NAME) or name one that exists"),
            (#/role.*does not exist/#, "create the user (createuser NAME) or name one that exists"),
            (#/pg_hba\.conf/#, "allow this host, user and database in the server's pg_hba.conf"),
            (#/translate host name/#, "check the host name"),
            (#/timeout|timed out|no route to host|unreachable/#, "check that the host can be reached and PostgreSQL is running there"),
            (#/too many clients|starting up|shutting down|recovery/#, "try again in a moment"),
        ]
    }

    /// A connection that failed because the server cannot be reached now (down, starting,
    /// restarting, full, or the network between): worth trying again, unlike a password or a
    /// database name that is wrong.
    public var serverUnavailable: Bool {
        guard code == .connectionFailed, let said = self.reason?.lowercased() else { return false }
        return ["connection refused", "no such file or directory", "timeout", "timed out", "no route to host", "unreachable", "starting up",
                "shutting down", "recovery", "not yet accepting connections", "too many clients", "server closed the connection"].contains { said.contains($0) }
    }

    /// The error of a connection string libpq cannot read (`reason`, redacted), shown as `redacted`.
    static func invalidConnectionString(reason: String, redacted: String) -> PostgresError {
        PostgresError(code: .invalidConnectionString,
                      message: "cannot read the connection string \(redacted): \(reason); write it as a postgresql:// URL (postgresql://HOST:PORT/DATABASE?user=USER) or as key=value pairs",
                      reason: reason)
    }

    /// Whether libpq's `reason` for a failed connection is a parameter of the string it could not
    /// take (`invalid sslmode value: "bogus"`, `invalid integer value "x" for connection option
    /// "port"`, or the server's `invalid value for parameter` of `options`): a mistake in the
    /// string, not a server that cannot be reached.
    static func isBadParameter(_ reason: String) -> Bool {
        reason.contains(#/^invalid (\S+ value|integer value|port number|value for parameter)/#)
    }

    /// The error of a connection to `server` that broke, with libpq's `reason`.
    static func connectionLost(reason: String, server: String, statement: String?) -> PostgresError {
        PostgresError(code: .connectionLost, message: "lost the connection to PostgreSQL at \(server) (\(reason)); check that the server is running, then try again",
                      reason: reason, statement: statement)
    }

    /// The error of an answer this layer does not handle, with libpq's `reason`.
    static func protocolViolation(reason: String, server: String, statement: String?) -> PostgresError {
        PostgresError(code: .protocolViolation, message: "PostgreSQL at \(server) gave an answer Monsoon does not handle (\(reason)); please report this",
                      reason: reason, statement: statement)
    }

    /// The error the server reported for a statement: its SQLSTATE, its one-line message `reason`
    /// and the constraint it names, said for a user of `server` connected as `user`.
    static func server(sqlState: String, reason: String, constraint: String?, server: String, user: String, statement: String?) -> PostgresError {
        let known: [String: (Code, String)] = [
            "23505": (.uniqueViolation, "PostgreSQL at \(server) refused a duplicate (\(reason)); please report this"),
            "23503": (.foreignKeyViolation, "PostgreSQL at \(server) refused a change to rows that others refer to (\(reason)); please report this"),
            "40001": (.serializationFailure, "a transaction on PostgreSQL at \(server) conflicted with another one and was undone (\(reason)); try again"),
            "40P01": (.deadlockDetected, "a transaction on PostgreSQL at \(server) was undone to end a deadlock (\(reason)); try again"),
            "42501": (.query, "the PostgreSQL user \(user) may not do this at \(server) (\(reason)); grant it the rights (the database's owner has them) or connect as another user"),
            "25006": (.query, "PostgreSQL at \(server) is read-only (\(reason)); connect to the primary server (target_session_attrs=read-write)"),
            "53100": (.query, "the disk of PostgreSQL at \(server) is full (\(reason)); free some space there and try again"),
            "57014": (.query, "PostgreSQL at \(server) cancelled a statement (\(reason)); try again, or raise statement_timeout if it set one"),
        ]
        // Classes 53 (insufficient resources) and 55 (object not in prerequisite state) clear up on their own.
        let clearsUp = sqlState.hasPrefix("53") || sqlState.hasPrefix("55")
        let (code, message) = known[sqlState] ?? (.query, clearsUp
            ? "PostgreSQL at \(server) cannot do this now (\(reason), SQLSTATE \(sqlState)); try again later"
            : "PostgreSQL at \(server) refused a statement: \(reason) (SQLSTATE \(sqlState)); please report this")
        return PostgresError(code: code, message: message, sqlState: sqlState, reason: reason, constraint: constraint, statement: statement)
    }

    /// The database `database` at `server` has schema `version`, above `supported`.
    static func newerSchema(database: String, server: String, version: Int, supported: Int) -> PostgresError {
        PostgresError(code: .newerSchema,
                      message: "the database \(database) at \(server) has schema version \(version), newer than this Monsoon (\(supported)); upgrade Monsoon (the database was left as it is)")
    }

    /// The first line of libpq's `message` that says something, without what the message names
    /// anyway (`connection to server at "HOST", port PORT failed: `, `FATAL:  `) nor libpq's
    /// indented hints, and starting lowercase: `connection refused`.
    static func firstLine(of message: String) -> String {
        for line in message.split(whereSeparator: \.isNewline) where !line.hasPrefix("\t") {
            var text = line.trimmingBlanks()
            if let match = text.firstMatch(of: #/^connection to server .*? failed: /#) { text.removeSubrange(match.range) }
            if let match = text.firstMatch(of: #/^(FATAL|ERROR|PANIC):\s+/#) { text.removeSubrange(match.range) }
            guard let first = text.first else { continue }
            // "Connection refused" reads lowercase inside a sentence; "SSL SYSCALL error" keeps its capitals.
            if let second = text.dropFirst().first, first.isUppercase, second.isLowercase { text = first.lowercased() + text.dropFirst() }
            return text
        }
        return "no reason given"
    }
}
