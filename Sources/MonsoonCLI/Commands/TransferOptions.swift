import Foundation
import MonsoonEngine

/// The options of the commands that download (`get`, `download`).
struct TransferOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Downloads running at once.", valueName: "n")
    var jobs: Int = 4

    @Option(name: .long, help: "Retries after the first attempt for transient failures.", valueName: "n")
    var retries: Int = 5

    @Option(name: .customLong("per-host"), help: "Downloads running at once to one host (default: no limit).", valueName: "n")
    var perHost: Int?

    @Option(name: .customLong("min-free"), help: "Free space to leave on the disk: a download that would eat into it does not start.", valueName: "size")
    var minFree: ByteSize = ByteSize(bytes: 64 << 20)

    init() {}

    mutating func validate() throws {
        if jobs < 1 { throw ValidationError("--jobs must be at least 1.") }
        if retries < 0 { throw ValidationError("--retries must be 0 or more.") }
        if let perHost, perHost < 1 { throw ValidationError("--per-host must be at least 1.") }
    }

    /// The engine's settings for these options.
    func configuration(scope: QueueScope) -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.scope = scope
        configuration.maxConcurrentDownloads = jobs
        configuration.maxDownloadsPerHost = perHost
        configuration.retry.maxRetries = retries
        configuration.diskReserve = minFree.bytes
        configuration.userAgent = "Monsoon/\(MonsoonCLI.version)"
        return configuration
    }
}

/// A download id, or `--all`, for `pause` and `resume`.
struct DownloadSelection: ParsableArguments {
    @Flag(name: .long, help: "Every download it applies to.") var all = false
    @Argument(help: "The download's id, like d17.", valueName: "id") var id: String?

    init() {}

    mutating func validate() throws {
        if all == (id != nil) { throw ValidationError("Give a download id, or --all.") }
        if let id { _ = try Control.parseID(id) }
    }

    /// The single id, or nil for `--all`.
    func downloadID() throws -> DownloadID? {
        try id.map(Control.parseID)
    }
}
