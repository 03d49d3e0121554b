import Foundation
import MonsoonCluster
import Testing

/// Statements, parameters, results, errors and transactions against a real server.
@Suite(.temporaryPostgres) struct PostgresConnectionTests {
    @Test func parametersAndResultsRoundTrip() async throws {
        try await withConnection(newDatabase: false) { connection in
            let text = "it's \"quoted\" \\ back, ünïcødé 🌧️, 雨季"
            let date = Date(timeIntervalSince1970: 1_796_000_000.123456)
            let row = try #require(try connection.execute(
                "SELECT $1::text AS text, $2::text AS missing, $3::bigint AS big, $4::bigint AS small, $5::boolean AS yes, $6::float8 AS number, $7::timestamptz AS at, $8::int AS count",
                [text, nil, Int64.max, Int64.min, true, 0.1, date, 42]).first)
            #expect(try row.string("text") == text)
            #expect(try row.string("missing") == nil && row.string(1) == nil)
            #expect(try row.int64("big") == Int64.max && row.int64(3) == Int64.min)
            #expect(try row.bool("yes") == true)
            #expect(try row.double("number") == 0.1)
            let read = try #require(try row.date("at"))
            #expect(abs(read.timeIntervalSince(date)) < 0.000_001, "\(read.timeIntervalSince1970)")
            #expect(try row.int("count") == 42)
            #expect(row.columns == ["text", "missing", "big", "small", "yes", "number", "at", "count"])
            // Reading a column as what it is not is a mistake in the query, said as such.
            #expect(throws: PostgresError.self) { try row.int64("text") }
            let error = try #require(throws: PostgresError.self) { try row.string("nope") }
            #expect(error.code == .invalidValue)
        }
    }

    @Test func textArraysRoundTrip() async throws {
        try await withConnection(newDatabase: false) { connection in
            let texts: [String?] = ["plain", "it's \"quoted\" \\ back", "{braces}, commas", "", nil, "NULL", "ünïcødé 🌧️ 雨季", "\\\""]
            let rows = try connection.execute("SELECT t FROM unnest($1::text[]) WITH ORDINALITY AS a(t, n) ORDER BY n", [PostgresArray(texts)])
            #expect(try rows.rows.map { try $0.string("t") } == texts)
            #expect(PostgresArray(["a\"b", nil]).postgresText == #"{"a\"b",NULL}"#)
        }
    }

    @Test func rowsAndChangedRowsAreCounted() async throws {
        try await withConnection { connection in
            try connection.executeScript("CREATE TABLE t (id bigserial PRIMARY KEY, name text); CREATE INDEX t_name ON t (name)")
            let inserted = try connection.execute("INSERT INTO t (name) SELECT 'n' || g FROM generate_series(1, $1::int) g", [5])
            #expect(inserted.affectedRows == 5 && inserted.count == 0)
            let rows = try connection.execute("SELECT id, name FROM t WHERE id > $1 ORDER BY id", [2])
            #expect(rows.count == 3)
            #expect(try rows.rows.map { try $0.string("name") } == ["n3", "n4", "n5"])
            #expect(try connection.execute("DELETE FROM t WHERE name = $1", ["n1"]).affectedRows == 1)
        }
    }

    @Test func aSyntaxErrorSaysSoInOneCleanLine() async throws {
        let server = try temporaryPostgres()
        try await onThread {
            let connection = try PostgresConnection(server.url())
            let error = try #require(throws: PostgresError.self) { try connection.execute("SELEC 1") }
            #expect(error.code == .query)
            #expect(error.sqlState == "42601")
            #expect(error.message == "PostgreSQL at 127.0.0.1:\(server.port) refused a statement: syntax error at or near \"SELEC\" (SQLSTATE 42601); please report this")
            #expect(error.statement == "SELEC 1")
            // The connection goes on.
            #expect(try connection.execute("SELECT 1").first?.int(0) == 1)
        }
    }

    @Test func aDuplicateIsAUniqueViolation() async throws {
        try await withConnection { connection in
            try connection.executeScript("CREATE TABLE t (key text UNIQUE)")
            try connection.execute("INSERT INTO t VALUES ($1)", ["a"])
            let error = try #require(throws: PostgresError.self) { try connection.execute("INSERT INTO t VALUES ($1)", ["a"]) }
            #expect(error.code == .uniqueViolation && error.sqlState == "23505" && error.constraint == "t_key_key")
            #expect(!error.message.contains("\n") && !error.message.contains("ERROR"), "\(error.message)")
        }
    }

    @Test func textWithANulCharacterIsRefusedBeforeItIsCut() async throws {
        try await withConnection(newDatabase: false) { connection in
            let error = try #require(throws: PostgresError.self) { try connection.execute("SELECT $1::text", ["a\0b"]) }
            #expect(error.code == .invalidValue)
        }
    }

    @Test func aTransactionCommitsOrRollsBackWhole() async throws {
        try await withConnection { connection in
            try connection.executeScript("CREATE TABLE t (n int UNIQUE)")
            try connection.transaction {
                try connection.execute("INSERT INTO t VALUES (1)")
                try connection.execute("INSERT INTO t VALUES (2)")
            }
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (3)")
                    throw Stop()
                }
            }
            // A savepoint inside: its failure undoes only its own work.
            try connection.transaction(isolation: .serializable) {
                try connection.execute("INSERT INTO t VALUES (4)")
                #expect(throws: PostgresError.self) {
                    try connection.transaction { try connection.execute("INSERT INTO t VALUES (1)") }
                }
            }
            #expect(try connection.execute("SELECT n FROM t ORDER BY n").rows.map { try $0.int(0) } == [1, 2, 4])
        }
    }

    @Test func aTransactionWhoseFailedStatementWasCaughtIsNotCommittedSilently() async throws {
        try await withConnection { connection in
            try connection.executeScript("CREATE TABLE t (n int UNIQUE)")
            try connection.execute("INSERT INTO t VALUES (1)")
            let error = try #require(throws: PostgresError.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (2)")
                    // A caught failure: the transaction is aborted on the server all the same.
                    _ = try? connection.execute("INSERT INTO t VALUES (1)")
                }
            }
            #expect(error.message.contains("was undone"), "\(error.message)")
            #expect(try connection.execute("SELECT count(*) FROM t").first?.int(0) == 1)
            #expect(try connection.execute("SELECT 1").count == 1, "the connection is usable again")
        }
    }

    /// The worker's statements run thousands of times a minute: each is parsed and planned once
    /// per session, under a name that says which text it is.
    @Test func aQueryIsPreparedOncePerSession() async throws {
        try await withConnection { connection in
            try connection.executeScript("CREATE TABLE t (id bigint PRIMARY KEY, name text)")
            let insert = "INSERT INTO t (id, name) VALUES ($1, $2)"
            for id in 1...3 { try connection.execute(insert, [Int64(id), "n\(id)"]) }
            let select = "SELECT name FROM t WHERE id = $1"
            #expect(try connection.execute(select, [2]).first?.string("name") == "n2")
            #expect(try connection.execute(select, [3]).first?.string("name") == "n3")
            let catalogue = "SELECT statement FROM pg_prepared_statements WHERE name LIKE 'monsoon_%' ORDER BY statement"
            // The catalogue's query is a query too: prepared before it runs.
            #expect(try connection.execute(catalogue).rows.map { try $0.string("statement") } == [insert, select, catalogue])
            // Not a query: nothing to plan, nothing prepared (the count below is the fourth).
            try connection.execute("SET application_name TO 'prepared-test'")
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_prepared_statements").first?.int("n") == 4)
        }
    }

    /// Behind a transaction pooler a prepared statement may be on another session: the one
    /// statement that finds out fails, and the session prepares nothing from then on.
    @Test func aSessionThatLosesItsStatementsStopsPreparing() async throws {
        try await withConnection { connection in
            let select = "SELECT $1::int + 1 AS n"
            #expect(try connection.execute(select, [1]).first?.int("n") == 2)
            try connection.executeScript("DEALLOCATE ALL")   // what a pooler's other session looks like
            let error = try #require(throws: PostgresError.self) { try connection.execute(select, [1]) }
            #expect(error.sqlState == "26000")
            #expect(try connection.execute(select, [2]).first?.int("n") == 3)
            #expect(try connection.execute("SELECT $1::int * 2 AS n", [4]).first?.int("n") == 8)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_prepared_statements").first?.int("n") == 0)
        }
    }

    /// A migration that changes a table's columns under a prepared `SELECT *`: the one run that
    /// finds the plan stale fails, the next prepares it again.
    @Test func aStatementPlannedForOldColumnsIsPreparedAgain() async throws {
        try await withConnection { connection in
            try connection.executeScript("CREATE TABLE t (id bigint); INSERT INTO t VALUES (1)")
            let select = "SELECT * FROM t WHERE id = $1"
            #expect(try connection.execute(select, [1]).first?.columns == ["id"])
            try connection.executeScript("ALTER TABLE t ADD COLUMN name text")
            let error = try #require(throws: PostgresError.self) { try connection.execute(select, [1]) }
            #expect(error.sqlState == "0A000")
            #expect(try connection.execute(select, [1]).first?.columns == ["id", "name"])
            // After a failure inside a transaction too (the statement could not be dropped then).
            try connection.executeScript("ALTER TABLE t ADD COLUMN size bigint")
            #expect(throws: PostgresError.self) {
                try connection.transaction { () throws(PostgresError) in _ = try connection.execute(select, [1]) }
            }
            #expect(try connection.execute(select, [1]).first?.columns == ["id", "name", "size"])
        }
    }
}
