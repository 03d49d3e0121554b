/// How much of other transactions' concurrent work a transaction may see.
public enum PostgresIsolation: String, Sendable {
    /// Each statement sees what was committed when it began (PostgreSQL's default).
    case readCommitted = "READ COMMITTED"
    /// Every statement sees what was committed when the transaction's first statement began.
    case repeatableRead = "REPEATABLE READ"
    /// As if the transactions ran one after another; a conflict fails one with `.serializationFailure`.
    case serializable = "SERIALIZABLE"
}
