import FoundationEssentials

/// A request the server received, as recorded by ``TestServer/requests``.
public struct RecordedRequest: Sendable {
    public var method: String
    /// The request target as sent, including any query string.
    public var path: String
    /// The header fields, names lowercased; repeated fields are joined with ", ".
    public var headers: [String: String]
    /// When the request head had been read.
    public var time: Date
    /// Identifies the TCP connection: requests on the same connection share the number.
    public var connectionID: Int

    /// The value of header `name`, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}
