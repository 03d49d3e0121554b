import CLibPQ

/// What a statement returned: its rows, copied out of libpq's result (which is freed at once), and
/// how many rows it changed.
public struct PostgresResult: Sendable {
    public let columns: [String]
    /// The rows, in the order the server sent them.
    public let rows: [PostgresRow]
    /// The rows an `INSERT`, `UPDATE`, `DELETE`, `MERGE`, `SELECT` or `FETCH` handled, from its
    /// command tag; 0 for other commands.
    public let affectedRows: Int

    public var count: Int { rows.count }
    public var first: PostgresRow? { rows.first }
    public subscript(index: Int) -> PostgresRow { rows[index] }
}

extension PostgresResult {
    /// The rows and columns of `result`, a `PGRES_TUPLES_OK` or `PGRES_COMMAND_OK` one.
    init(_ result: OpaquePointer) {
        let columnCount = monsoon_PQnfields(result)
        let columns = (0..<columnCount).map { String(cString: monsoon_PQfname(result, $0)) }
        self.columns = columns
        rows = (0..<monsoon_PQntuples(result)).map { row in
            PostgresRow(columns: columns, values: (0..<columnCount).map { column in
                monsoon_PQgetisnull(result, row, column) == 1 ? nil : String(cString: monsoon_PQgetvalue(result, row, column))
            })
        }
        affectedRows = Int(String(cString: monsoon_PQcmdTuples(result))) ?? 0
    }
}
