/// The periods and waits of commands that a test shortens: a test moves time by setting these,
/// never by sleeping past them. The binary runs with the defaults.
public struct Timings: Sendable {
    /// How often `play` saves the position while it plays (it saves on pause and at the end too).
    public var playbackSave: Double = 5
    /// The first wait before a failed download or feed fetch is tried again, in seconds; it
    /// doubles with each failure in a row (``RetryPolicy/baseDelay``). A server's `Retry-After`
    /// is waited as it says.
    public var retryBase: Double = 1
    /// How long a hook has to end after SIGTERM (Ctrl-C of the run) before it gets SIGKILL, in seconds.
    public var hookGrace: Double = 5

    public init() {}
}
