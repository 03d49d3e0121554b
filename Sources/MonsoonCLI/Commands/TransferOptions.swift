import Foundation
import MonsoonEngine

/// The options of the commands that download (`get`, `download`). Each one given wins
/// over the home's setting (`monsoon config`), which wins over the default.
struct TransferOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Downloads running at once (get: 4; download: the setting concurrency, 2).", valueName: "n")
    var jobs: Int?

    @Option(name: .long, help: "Retries after the first attempt for transient failures (default: the setting retries, 5).", valueName: "n")
    var retries: Int?

    @Option(name: .customLong("per-host"), help: "Downloads running at once to one host (default: the setting per-host, no limit).", valueName: "n")
    var perHost: Int?

    @Option(name: .customLong("min-free"), help: "Free space to leave on the disk: a download that would eat into it does not start (default: the setting disk-reserve, 64MiB).", valueName: "size")
    var minFree: ByteSize?

    init() {}

    mutating func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1.") }
        if let retries, retries < 0 { throw ValidationError("--retries must be 0 or more.") }
        if let perHost, perHost < 1 { throw ValidationError("--per-host must be at least 1.") }
    }

    /// The engine's settings: these options, else the home's settings.
    /// - Parameter jobs: the number of downloads at once when `-j` is not given (nil: the
    ///   setting `concurrency`).
    func configuration(scope: QueueScope, home: Home, jobs defaultJobs: Int? = nil) throws -> EngineConfiguration {
        let settings = try home.openSettings()
        var configuration = EngineConfiguration()
        do {
            configuration.scope = scope
            configuration.maxConcurrentDownloads = try jobs ?? defaultJobs ?? settings.concurrency()
            configuration.maxDownloadsPerHost = try perHost ?? settings.perHost()
            configuration.retry.maxRetries = try retries ?? settings.retries()
            configuration.diskReserve = try minFree?.bytes ?? settings.diskReserve()
            configuration.userAgent = try settings.userAgent() ?? "Monsoon/\(MonsoonCLI.version)"
        } catch {
            throw CLIError(message: "cannot read the settings: \(error)")
        }
        return configuration
    }
}

/// A download id, or `--all`, for `pause` and `resume`.
struct DownloadSelection: ParsableArguments {
    @Flag(name: .long, help: "Every download it applies to.") var all = false
    @Argument(help: "A download id like d17, or an episode id like 42.", valueName: "id") var id: String?

    init() {}

    mutating func validate() throws {
        if all == (id != nil) { throw ValidationError("Give a download or episode id, or --all.") }
        if let id { _ = try Control.parseID(id) }
    }

    /// The single id, or nil for `--all`.
    func downloadID() throws -> DownloadID? {
        try id.map(Control.parseID)
    }
}
