import FoundationEssentials

extension Transfer {
    /// What every chunk of the body is checked against and spends from.
    struct Limits {
        /// The largest file a download may make (`EngineConfiguration.maxFileBytes`, or the
        /// request's `sizeLimit` when smaller), and where that limit comes from.
        var maxFileBytes = Int.max
        var reason: String?
        /// The largest body a fetch keeps in memory.
        var maxBytes = Int.max
        /// The file system the part is on, whose allowance every write spends (nil: not measured).
        /// Unowned: the loop's `SpaceGovernor` keeps every volume for as long as it runs, longer than
        /// any transfer, and the write callback then spends from it without a retain per chunk.
        unowned(unsafe) var volume: Volume?
        /// The run's rate limit, which every chunk of the body spends from (nil: no limit).
        /// Unowned, like `volume`: the loop keeps it for as long as it runs.
        unowned(unsafe) var rateLimiter: RateLimiter?

        /// The body outgrew `maxFileBytes`: stopped there (a part, when there is one, is kept).
        func tooLarge(stoppedAt bytes: Int?) -> DownloadError {
            let stopped = bytes.map { "; stopped at \(ByteCount.format($0))" } ?? ""
            return DownloadError(.tooLarge, "the body is larger than this download's limit of \(describedLimit)\(stopped)")
        }

        /// The server announced a length over `maxFileBytes`: refused before a byte is written.
        func tooLarge(announced total: Int) -> DownloadError {
            DownloadError(.tooLarge, "the server says the file is \(ByteCount.format(total)), larger than this download's limit of \(describedLimit); refused")
        }

        private var describedLimit: String {
            ByteCount.format(maxFileBytes) + (reason.map { " (\($0))" } ?? "")
        }
    }
}
