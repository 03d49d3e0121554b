import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// The options of the commands that download (`get`, `download`). Each one given wins
/// over the home's setting (`monsoon config`), which wins over the default.
struct TransferOptions: ParsableArguments {
    @Option("-j", "--jobs", help: "Downloads running at once, 1 to 1000 (get: 4; archive: 6; download and sync: the setting concurrency, 2).", valueName: "n")
    var jobs: Int?

    @Option("--retries", help: "Retries after the first attempt for transient failures (default: the setting retries, 5).", valueName: "n")
    var retries: Int?

    @Option("--per-host", help: "Downloads running at once to one host (default: the setting per-host, no limit).", valueName: "n")
    var perHost: Int?

    @Option("--min-free", help: "Free space to leave on the disk: a download that would eat into it does not start, or stops and waits, its part kept (default: the setting disk-reserve, 64MiB).", valueName: "size")
    var minFree: ByteSize?

    @Option("--limit-rate", help: "The most bytes a second over all downloads together, like 2M or 500K; 0 for no limit (default: the setting limit-rate, off).", valueName: "speed")
    var limitRate: Speed?

    @Option("--proxy", help: "A proxy for every request (http://, https:// or socks5://HOST:PORT; default: $http_proxy, $https_proxy, $no_proxy).", valueName: "url")
    var proxy: String?

    @Flag("-4", help: "Connect over IPv4 only.")
    var ipv4 = false

    @Flag("-6", help: "Connect over IPv6 only.")
    var ipv6 = false

    @Option("--user-agent", help: "The User-Agent header (default: the setting user-agent, Monsoon/VERSION).", valueName: "text")
    var userAgent: String?

    @Option("--cacert", help: "Trust the certificate authorities in FILE (PEM) instead of the system's.", valueName: "file")
    var cacert: String?

    @Option("--connect-timeout", help: "Seconds allowed to connect (default: 30).", valueName: "seconds")
    var connectTimeout: Double?

    @Flag("--allow-private", help: "Let URLs from feeds lead to this machine or its own network (loopback, private, link-local addresses); by default only a feed there may (default: the setting allow-private, off).")
    var allowPrivate = false

    init() {}

    /// The most downloads at once that `-j` takes: as many as the setting `concurrency`.
    static let jobsLimit = Settings.concurrencyLimit

    mutating func validate() throws {
        if let jobs, !(1...Self.jobsLimit).contains(jobs) { throw ValidationError("--jobs takes 1 to \(Self.jobsLimit) downloads at once, not \(jobs)") }
        if let retries, retries < 0 { throw ValidationError("--retries must be 0 or more") }
        if let perHost, perHost < 1 { throw ValidationError("--per-host must be at least 1") }
        if ipv4 && ipv6 { throw ValidationError("-4 and -6 cannot be used together; choose one") }
        if let connectTimeout, !(connectTimeout >= 0.001 && connectTimeout <= 3600) {
            throw ValidationError("--connect-timeout must be between 0.001 and 3600 seconds")
        }
        if let userAgent, userAgent.isEmpty || userAgent.contains(where: \.isNewline) { throw ValidationError("--user-agent must be one non-empty line") }
        if let proxy {
            let scheme = URL(string: proxy)?.scheme?.lowercased() ?? ""
            guard ["http", "https", "socks4", "socks4a", "socks5", "socks5h"].contains(scheme), URL(string: proxy)?.host?.isEmpty == false else {
                throw ValidationError("'\(proxy)' is not a proxy URL; give one like http://proxy.example:3128 or socks5://127.0.0.1:1080")
            }
        }
    }

    /// The engine's settings: these options, else the home's settings.
    /// - Parameter jobs: the number of downloads at once when `-j` is not given (nil: the
    ///   setting `concurrency`).
    func configuration(scope: QueueScope, home: Home, context: CommandContext, jobs defaultJobs: Int? = nil) throws -> EngineConfiguration {
        let settings = try home.openSettings()
        var configuration = EngineConfiguration()
        try CLIError.prefixing("cannot read the settings") {
            configuration.scope = scope
            configuration.maxConcurrentDownloads = try jobs ?? defaultJobs ?? settings.concurrency()
            configuration.maxDownloadsPerHost = try perHost ?? settings.perHost()
            configuration.retry.maxRetries = try retries ?? settings.retries()
            configuration.diskReserve = try minFree?.bytes ?? settings.diskReserve()
            configuration.network.userAgent = try userAgent ?? settings.userAgent() ?? "Monsoon/\(MonsoonCLI.version)"
            configuration.maxBytesPerSecond = try limitRate.map(\.bytesPerSecond) ?? settings.limitRate()
        }
        configuration.retry.baseDelay = context.timings.retryBase
        configuration.network.proxy = proxy
        configuration.network.ipVersion = ipv4 ? .v4 : ipv6 ? .v6 : .any
        if let connectTimeout { configuration.network.connectTimeout = connectTimeout }
        if let cacert {
            let path = context.absolutePath(cacert)
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw CLIError.usage("cannot read the CA file \(path) given with --cacert")
            }
            configuration.network.caBundlePath = path
        }
        return configuration
    }
}

/// The machine-readable output of the commands that download (`get`, `download`, `archive`, `sync`).
struct RunOutputOptions: ParsableArguments {
    @Flag("--json", help: "Print JSON lines on standard output, one per event (started, finished, retrying, failed, …), each with event and time.")
    var json = false

    @Option("--report", help: "Write a JSON run report to FILE (bytes, throughput, time to first byte, retries by status, resumed bytes, connections; each download's phases and attempts).", valueName: "file")
    var report: String?

    @Option("--report-html", help: "Write the run's page to FILE: one self-contained HTML file with a timeline of the downloads, throughput and time to first byte per host.", valueName: "file")
    var reportHTML: String?

    init() {}

    /// A collector for `--report` and `--report-html`, when asked for.
    func makeReport() -> RunReport? { report != nil || reportHTML != nil ? RunReport() : nil }

    /// Writes the report and its page, when asked for: the page is made from the report's JSON,
    /// so it is the page `monsoon report` makes of that file.
    func write(_ runReport: RunReport?, command: String, context: CommandContext) throws {
        guard let runReport else { return }
        let text = runReport.text(command: command)
        if let report { try ReportFile.write(text, to: context.absolutePath(report), what: "the report") }
        if let reportHTML {
            let path = context.absolutePath(reportHTML)
            try ReportFile.write(try RunPage.html(reportData: Data(text.utf8), path: path), to: path, what: "the page")
        }
    }
}

/// The options of a run of the whole queue: `download` and `sync`.
struct QueueRunOptions: ParsableArguments {
    @OptionGroup var transfer: TransferOptions

    @Option("-o", "--out", "--output", help: "The download root for episodes not started yet (default: the setting download-root).", valueName: "dir")
    var out: String?

    @OptionGroup var output: RunOutputOptions

    @OptionGroup var after: AfterDownloadOptions

    init() {}
}

/// A download id, or `--all`, for `pause` and `resume`.
struct DownloadSelection: ParsableArguments {
    @Flag("--all", help: "Every download it applies to.") var all = false
    @Argument(help: "A download id like d17, or an episode id like 42.", valueName: "id") var id: String?

    init() {}

    mutating func validate() throws {
        if all == (id != nil) { throw ValidationError("give a download or episode id, or --all") }
        if let id { _ = try Control.parseID(id) }
    }

    /// Sends `one` for the selected download, or `all` for `--all`.
    func apply(_ one: (DownloadID) -> DownloadCommand, all: DownloadCommand, global: GlobalOptions, context: CommandContext) async throws -> Int32 {
        guard let id = try id.map(Control.parseID) else { return try await Control.apply(all, id: nil, global: global, context: context) }
        return try await Control.apply(one(id), id: id, global: global, context: context)
    }
}
