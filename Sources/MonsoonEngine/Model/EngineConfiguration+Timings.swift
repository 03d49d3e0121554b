extension EngineConfiguration {
    /// A transfer slower than `bytesPerSecond` for `seconds` counts as stalled, a retryable error.
    public struct Stall: Sendable, Equatable {
        public var bytesPerSecond: Int
        /// The stall window.
        public var seconds: Int

        /// The default: under 1 KiB a second for 30 seconds.
        public init(bytesPerSecond: Int = 1024, seconds: Int = 30) {
            self.bytesPerSecond = bytesPerSecond
            self.seconds = seconds
        }
    }

    /// How often a running download's part is flushed and its length saved as the checkpoint:
    /// every `bytes` or `seconds`, whichever comes first.
    public struct Checkpoint: Sendable, Equatable {
        public var bytes: Int
        /// The longest time between two checkpoints of a running download.
        public var seconds: Double

        /// The default: every 8 MiB or 5 seconds.
        public init(bytes: Int = 8 << 20, seconds: Double = 5) {
            self.bytes = bytes
            self.seconds = seconds
        }
    }
}
