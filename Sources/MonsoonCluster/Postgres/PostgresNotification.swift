/// A `NOTIFY` received on a channel the connection listens to.
public struct PostgresNotification: Sendable, Hashable {
    /// The channel it was sent on.
    public var channel: String
    /// The text sent with it ("" for none).
    public var payload: String
    /// The process id of the server session that sent it.
    public var senderProcessID: Int32

    /// A notification on `channel` with `payload`, from the session `senderProcessID`.
    public init(channel: String, payload: String, senderProcessID: Int32) {
        self.channel = channel
        self.payload = payload
        self.senderProcessID = senderProcessID
    }
}
