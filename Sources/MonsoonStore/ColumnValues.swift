/// Values for a statement's named parameters, one per column (`:url` takes `values[.url]`), made
/// ready for binding: `Statement.bind(_:)` reads each parameter's value by its column. A column
/// with no value set binds `NULL`.
public struct ColumnValues<Column: TableColumn> {
    /// By the column's raw value.
    var values: [SQLValue]

    /// No value yet; `capacity`, the number of columns, spares the growing.
    public init(capacity: Int = 0) {
        values = []
        values.reserveCapacity(capacity)
    }

    /// The value of `column`'s parameter (`NULL` until set).
    public subscript(column: Column) -> SQLValue {
        get { column.rawValue < values.count ? values[column.rawValue] : .null }
        set {
            if column.rawValue >= values.count { values.append(contentsOf: repeatElement(.null, count: column.rawValue + 1 - values.count)) }
            values[column.rawValue] = newValue
        }
    }
}
