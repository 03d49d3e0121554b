import CLibPQ

extension PostgresConnection {
    /// Runs `body` in a transaction, committing when it returns and rolling back when it throws.
    /// Inside another transaction it is a savepoint of it: its work is undone alone when it throws,
    /// and committed with the outer one.
    ///
    /// - Parameter isolation: the transaction's isolation level; nil for the session's default
    ///   (ignored for a savepoint, which has its transaction's).
    public func transaction<T>(isolation: PostgresIsolation? = nil, _ body: () throws -> T) throws -> T {
        if monsoon_PQtransactionStatus(raw) != PQTRANS_IDLE {
            try executeScript("SAVEPOINT monsoon_nested")
            do {
                let result = try body()
                try executeScript("RELEASE SAVEPOINT monsoon_nested")
                return result
            } catch {
                // Only a broken connection fails these; the outer transaction then fails too, and says so.
                _ = try? executeScript("ROLLBACK TO SAVEPOINT monsoon_nested; RELEASE SAVEPOINT monsoon_nested")
                throw error
            }
        }
        do {
            try executeScript(isolation.map { "BEGIN ISOLATION LEVEL \($0.rawValue)" } ?? "BEGIN")
            let result = try body()
            // COMMIT of a transaction that had an error (one the body caught and did not rethrow)
            // rolls back without a word: say it instead of losing the body's work silently.
            if monsoon_PQtransactionStatus(raw) == PQTRANS_INERROR {
                throw PostgresError(code: .query, message: "a transaction on PostgreSQL at \(server) was undone: one of its statements failed and its error was dropped; please report this")
            }
            try executeScript("COMMIT")
            return result
        } catch {
            if monsoon_PQtransactionStatus(raw) != PQTRANS_IDLE {
                // With the connection gone the server has rolled back already; the body's error says why.
                _ = try? executeScript("ROLLBACK")
            }
            throw error
        }
    }
}

extension PostgresConnection {
    /// `transaction` for a body that throws only `PostgresError`s: the whole of it then does too.
    public func transaction<T>(isolation: PostgresIsolation? = nil, _ body: () throws(PostgresError) -> T) throws(PostgresError) -> T {
        do {
            return try transaction(isolation: isolation) { () throws -> T in try body() }
        } catch let error as PostgresError {
            throw error
        } catch {
            // Unreachable: the body throws PostgresErrors, and so do BEGIN, COMMIT and ROLLBACK.
            throw PostgresError(code: .protocolViolation, message: "a transaction failed for a reason PostgreSQL's layer does not know (\(error)); please report this")
        }
    }
}
