import CSQLite

/// Reading and binding by column (`TableColumn`): names are matched to positions once per
/// statement and column type, and kept with the statement, which the database caches.
extension Statement {
    /// Where each of `Column`'s columns is in this statement's result (by raw value; -1 when it
    /// is not selected), matched by the result columns' names (an `AS` alias names one).
    func positions<Column: TableColumn>(of type: Column.Type) throws(StoreError) -> [Int32] {
        let key = ObjectIdentifier(type)
        if let known = resultPositions[key] { return known }
        let names = Column.names
        var positions = [Int32](repeating: -1, count: names.byValue.count)
        for position in 0..<sqlite3_column_count(raw) {
            if let name = sqlite3_column_name(raw, position), let column = names.byName[String(cString: name)] { positions[column] = position }
        }
        resultPositions[key] = positions
        return positions
    }

    /// The column of each parameter, in the parameters' order (by raw value), matched by name
    /// (`:url` is `url`); a parameter that names no column fails.
    private func parameterColumns<Column: TableColumn>(of type: Column.Type) throws(StoreError) -> [Int] {
        let key = ObjectIdentifier(type)
        if let known = parameterColumnsByType[key] { return known }
        let byName = Column.names.byName
        var columns: [Int] = []
        for index in 0..<sqlite3_bind_parameter_count(raw) {
            let name = sqlite3_bind_parameter_name(raw, index + 1).map { String(String(cString: $0).dropFirst()) }
            guard let name, let column = byName[name] else {
                throw StoreError(code: SQLITE_RANGE, message: "a statement's parameter \(index + 1) (\(name ?? "unnamed")) names no column of \(Column.self); please report this",
                                 statement: sql)
            }
            columns.append(column)
        }
        parameterColumnsByType[key] = columns
        return columns
    }

    /// Binds each named parameter (`:url`) to its column's value, after a reset.
    public func bind<Column: TableColumn>(_ values: ColumnValues<Column>) throws(StoreError) {
        let columns = try parameterColumns(of: Column.self)
        sqlite3_reset(raw)
        for (offset, column) in columns.enumerated() {
            try bind(column < values.values.count ? values.values[column] : .null, at: Int32(offset + 1))
        }
    }

    /// Runs a statement that returns no rows, with its named parameters' values.
    public func run<Column: TableColumn>(_ values: ColumnValues<Column>) throws(StoreError) {
        try bind(values)
        while try step() {}
        sqlite3_reset(raw)
    }

    /// Runs a query and maps each row, read by `Column`.
    public func query<Column: TableColumn, T>(_ values: [SQLValueConvertible] = [], reading type: Column.Type,
                                             _ transform: (TableRow<Column>) throws -> T) throws -> [T] {
        var results: [T] = []
        try forEach(values, reading: type) { results.append(try transform($0)) }
        return results
    }

    /// The first row of a query, read by `Column` and mapped, or nil.
    public func first<Column: TableColumn, T>(_ values: [SQLValueConvertible] = [], reading type: Column.Type,
                                             _ transform: (TableRow<Column>) throws -> T) throws -> T? {
        try bind(values)
        defer { sqlite3_reset(raw) }
        return try step() ? try transform(TableRow(statement: self)) : nil
    }

    /// Runs a query and gives each row, read by `Column`, to `body` as it comes: a large result
    /// is never all in memory.
    public func forEach<Column: TableColumn>(_ values: [SQLValueConvertible] = [], reading type: Column.Type,
                                             _ body: (TableRow<Column>) throws -> Void) throws {
        try bind(values)
        defer { sqlite3_reset(raw) }
        let row = try TableRow<Column>(statement: self)
        while try step() { try body(row) }
    }
}
