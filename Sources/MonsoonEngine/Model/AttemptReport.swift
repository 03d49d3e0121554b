import FoundationEssentials

/// One request of a download, as it ended: for run reports (throughput, time to first
/// byte, retries by status, resumed bytes, connections opened versus reused).
public struct AttemptReport: Sendable, Equatable {
    /// The download the request was for.
    public var id: DownloadID
    /// The host (and port) the request went to first.
    public var host: String
    /// The final response's HTTP status; 0 when none came.
    public var status: Int
    /// Body bytes written to the file by this attempt.
    public var bytes: Int
    /// Where the attempt resumed the part (0: from the start).
    public var resumedFrom: Int
    /// Seconds from the start of the request to the first body byte; nil when none came.
    public var timeToFirstByte: Double?
    /// Seconds the attempt took.
    public var duration: Double
    /// Connections curl opened for it (0: it reused one).
    public var newConnections: Int
    /// Why it failed; nil when it succeeded.
    public var error: DownloadError?
    /// When the request started (for a run's timeline): its end less `duration`.
    public var started: Date

    /// A report with every field given; times are in seconds, byte counts in bytes. `started`
    /// defaults to `duration` seconds before now: a report is made as its request ends.
    public init(id: DownloadID, host: String, status: Int, bytes: Int, resumedFrom: Int, timeToFirstByte: Double?, duration: Double,
                newConnections: Int, error: DownloadError?, started: Date? = nil) {
        self.id = id
        self.host = host
        self.status = status
        self.bytes = bytes
        self.resumedFrom = resumedFrom
        self.timeToFirstByte = timeToFirstByte
        self.duration = duration
        self.newConnections = newConnections
        self.error = error
        self.started = started ?? Date(timeIntervalSinceNow: -duration)
    }
}
