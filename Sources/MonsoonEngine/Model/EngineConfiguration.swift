/// The engine's limits and timings. Tests shrink the timings to run fast.
public struct EngineConfiguration: Sendable, Equatable {
    /// Transfers running at once, over all hosts (at most `concurrencyLimit`: the engine reads
    /// ahead, and sizes its tables, by it).
    public var maxConcurrentDownloads: Int = 4
    /// The most transfers the engine runs at once, whatever `maxConcurrentDownloads` asks.
    public static let concurrencyLimit = 10_000

    /// `asked` transfers at once, as the engine takes them: 0 (none start) to `concurrencyLimit`.
    static func concurrency(_ asked: Int) -> Int { min(max(0, asked), concurrencyLimit) }

    /// The limits a running engine is given (`DownloadManager.setLimits`); nil: unchanged.
    mutating func setLimits(maxConcurrent: Int?, perHost: Int??) {
        if let maxConcurrent { maxConcurrentDownloads = Self.concurrency(maxConcurrent) }
        if let perHost { maxDownloadsPerHost = perHost.map { max(1, $0) } }
    }

    /// This configuration as the engine runs it: its concurrency within `concurrencyLimit`.
    var asTaken: EngineConfiguration {
        var taken = self
        taken.maxConcurrentDownloads = Self.concurrency(maxConcurrentDownloads)
        return taken
    }
    /// Transfers running at once to one host (counted per transfer, so HTTP/2
    /// multiplexing does not dodge it); nil for no per-host limit.
    public var maxDownloadsPerHost: Int? = nil
    /// In-memory fetches (feeds) running at once; they do not take download slots.
    public var maxConcurrentFetches: Int = 8
    public var retry: RetryPolicy = RetryPolicy()
    /// The clock the engine's retries (of downloads and of fetches), holds, progress reports and
    /// checkpoints read (tests drive their own).
    public var clock: EngineClock = .system
    /// When a transfer counts as stalled (a retryable error), so a hung server never blocks the queue.
    public var stall = Stall()
    /// Bytes that must stay free on the destination's file system.
    public var diskReserve: Int = 64 << 20
    /// How often a running download's part is flushed to disk and its length saved as the
    /// checkpoint. Only after a reboot is a part cut back to its checkpoint.
    public var checkpoint = Checkpoint()
    /// How long the engine's connections to its queue's database (`DownloadManager(configuration:
    /// databasePath:)`) wait for another process's lock before the write fails, in seconds: a
    /// failed save of a file's row is tried again later, the file with it. Ten seconds outlasts
    /// any transaction of another Monsoon process; tests shorten it to see a held lock's effect quickly.
    public var storeBusyTimeout: Double = 10
    /// How requests go out: their User-Agent, the trust for HTTPS, a proxy, the IP version and
    /// the time allowed to connect.
    public var network = Network()
    /// Which downloads of a shared, persistent queue this engine starts.
    public var scope: QueueScope = .wholeQueue
    /// The largest file a download may make; a larger one (or a stream that never ends)
    /// fails with `.tooLarge`. Nil: no limit.
    public var maxFileBytes: Int? = nil
    /// The most body bytes a second over all downloads together, however many run (within
    /// about a quarter of a second's worth over any span; fetches such as feeds are not
    /// counted). Nil: no limit.
    public var maxBytesPerSecond: Int? = nil
    /// How many times in a row a download starts over at once, without Range, when an answer
    /// contradicts what was known (the file changed, a range that cannot be), before it fails
    /// with `.restartLimit` (a cluster worker sets 0: each new request goes through the shared
    /// queue's politeness).
    public var maxRestarts = 3
    /// Where every request and response is recorded (WARC), or nil. With one, requests go over
    /// HTTP/1.1 (WARC's `application/http` records hold HTTP/1.x messages, and readers such as
    /// warcio refuse others), fetches ask for no compression (their bodies are recorded as
    /// received), and a download is complete only once its records are on disk.
    public var warc: WARCArchive? = nil

    /// An IP version to connect with.
    ///
    /// Frozen: the set is complete by design (either version, or one of the two there are).
    public enum IPVersion: Sendable, Equatable {
        /// `any` lets curl choose, trying both; `v4` and `v6` resolve and connect over that version only.
        case any, v4, v6
    }

    /// The defaults: 4 downloads at once, no per-host limit, 30 s to connect, a 64 MiB disk reserve, no rate or size limit.
    public init() {}
}
