/// The periods and waits of commands that a test shortens: a test moves time by setting these,
/// never by sleeping past them. The binary runs with the defaults.
public struct Timings: Sendable {
    /// How often `play` saves the position while it plays (it saves on pause and at the end too).
    public var playbackSave: Double = 5

    public init() {}
}
