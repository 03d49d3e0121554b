/// A `NOTIFY` received on a channel the connection listens to.
public struct PostgresNotification: Sendable, Hashable {
    public var channel: String
    /// The text sent with it ("" for none).
    public var payload: String
    /// The process id of the server session that sent it.
    public var senderProcessID: Int32
}
